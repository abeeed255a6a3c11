// The participant host's answer to one pass over queries (HostReply 'point', and the quality
// and churn replies).
export interface PointReply {
  /** Concatenated ids of every query; query i owns ids[offsets[i]..offsets[i+1]). */
  ids: Int32Array;
  offsets: Int32Array;
  latenciesMs: Float64Array;
  wallS: number;
  /** Per query: the engine threw (message) or null. */
  errors: (string | null)[];
  /** Per query: a 32-bit digest of its ids in order, so passes can be compared cheaply (the
   * participant host's point replies). */
  digests?: Uint32Array;
  /** Queries each search thread answered, when the pass ran in threads (Participant.reopenInThreads). */
  threadsUsed?: number[];
}
