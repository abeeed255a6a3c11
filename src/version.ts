export const VECBENCH_VERSION = '0.1.0';
