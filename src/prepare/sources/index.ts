// The real-data registry entries (appended to SOURCES in ../registry.ts).
import type { DatasetSource } from '../dataset-source.ts';
import { customSource } from './custom.ts';
import { fashionMnistSource } from './fashion-mnist.ts';
import { gloveSource } from './glove.ts';
import { minilmSource } from './minilm.ts';
import { dbpediaSource, wikiSource } from './remote.ts';

export const REAL_SOURCES: DatasetSource[] = [fashionMnistSource, gloveSource, minilmSource, wikiSource, dbpediaSource, customSource];
