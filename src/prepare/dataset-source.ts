// A registry entry (registry.ts SOURCES): a dataset family, how its names look and how it is made.
import type { Dataset, PreparedData } from '../datasets/layout.ts';

export interface DatasetSource {
  /** Shown by `vecbench datasets`. */
  pattern: string;
  describe: string;
  matches(name: string): boolean;
  /** Builds the whole set in memory (small sets); writePrepared stores it. */
  make?(name: string): Promise<PreparedData>;
  /** Streams the set into the prepared layout itself (real data of any size); preferred over
   * make when present. */
  prepare?(dataDir: string, name: string, opts?: { quiet?: boolean }): Promise<Dataset>;
  /** For `vecbench datasets`: rows x dimension and queries, metric, where the data comes from. */
  size?: string;
  metric?: string;
  origin?: string;
}
