// Messages of the quality run between the runner and a participant host (they join
// src/runner/protocol.ts's unions through FeatureMessages, below).
import type { Knobs } from '../contracts.ts';
import type { PointReply } from '../runner/point-reply.ts';

export type Arm = 'dense' | 'keyword' | 'hybrid';

interface KeywordArmInfo {
  /** native: the engine's own keywordSearch; client-side: BM25 in the host process. */
  where: 'native' | 'client-side';
  /** How it ranks, in the participant's words or the library's. */
  scoring: string;
  /** Seconds to build the client-side index (0 for native). */
  build_s: number;
}

export type QualityHostRequest =
  /** The participant's own words on its keyword scoring and fusion (Participant.keywordScoring / fusionMethod). */
  | { type: 'quality-setup'; keywordScoring: string | null; fusionMethod: string | null }
  | { type: 'quality-arm'; arm: Arm; knobs: Knobs | null; k: number; queries: number[]; clients: number };

export type QualityHostReply =
  | { type: 'quality-setup'; keyword: KeywordArmInfo | null; fusion: { where: 'native' | 'client-side'; method: string } | null; reason: string | null }
  | { type: 'quality-arm'; reply: PointReply; roundTrips: number };

declare module '../runner/protocol.ts' {
  interface FeatureMessages {
    quality: { request: QualityHostRequest; reply: QualityHostReply };
  }
}
