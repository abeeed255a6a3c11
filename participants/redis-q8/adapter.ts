// Redis 8 vector sets with int8 quantization (Q8, Redis's own default): the `redis` participant's
// adapter with another settings.json, so float32 and int8 sit side by side in the report.
export { default } from '../redis/adapter.ts';
