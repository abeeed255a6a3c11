// The participant SDK: the one module a participant (participants/<name>/) imports from src/.
// Everything an adapter or a load client needs is named here, so the harness can move its own
// files without touching any participant, and a reader sees the whole surface in one place
// (docs/contracts.md, "The participant SDK"). test/unit/sdk-boundary.test.ts keeps participants to it.

// The participant interface: the adapter's default export, sessions, rows, requests, filters.
export * from '../contracts.ts';
// Errors a participant throws: a bad setting or input (one line, exit 2), a missing install.
export { SetupNeeded, UserError } from '../util/errors.ts';
// The adapter kit: filters compiled to row predicates, and the installed package's version.
export {
  compileFilter,
  declaredStrategy,
  EVERY_FILTER,
  firstNonUnitRow,
  intSetting,
  packageVersion,
  settingsObject,
  urlConnection,
  urlCredentials,
} from '../adapters/kit.ts';
// Filters as query text: SQL with bound values (? or $n) or an expression with its values written in.
export { filterLiteral, filterSql, foldFilter } from '../adapters/filter-text.ts';
// Filters as (column slot, lo, hi) triples over attribute columns, for a native addon to evaluate.
export { filterClauses } from '../adapters/filter-clauses.ts';
// A participant's own N-API addon, loaded once or unavailable in one line naming its build.
export { participantAddon } from '../adapters/native-addon.ts';
// A native addon's filters compiled once, and its passes timed in C++ query by query.
export { type NativeGraphSearch, NativeGraphSearcher, timedNativePass } from '../adapters/native-pass.ts';
// Search knobs declared once (Participant.knobs) with the schema of their values; the harness checks them.
export { choiceKnob, intKnob, knobWith } from '../adapters/knobs.ts';
// Persistence of in-process indexes: column files and float arrays in the engine's directory.
export { fileBytes, readColumns, readFloats, writeColumns, writeFloats } from '../adapters/persist.ts';
// The attribute columns and live / deleted flags of an engine that keeps neither, saved beside it.
export { RowColumns } from '../adapters/row-columns.ts';
// Filters by name and the rows they match (the predicate cache of in-process engines keys on it).
export { filterKey, matchingRows } from '../datasets/groups.ts';
// Exact top-k (the native addon or its portable fallback), for exact-scan participants.
export { exactTopK, nativeAvailable } from '../groundtruth/exact.ts';
// Servers: spawning one on 127.0.0.1 and stopping it by PID, the handle, reachability.
export { serverHandle, spawnServer, userIds } from '../runner/server.ts';
// More free 127.0.0.1 ports, for a server that listens on several (the runner gives one).
export { freePort } from '../runner/free-port.ts';
export { checkReachable, serverSideFile } from '../runner/server-data.ts';
// Wire clients of the load generator: JSON ids over HTTP, PostgreSQL's extended protocol.
export { idsFromJson } from '../loadgen/clients/http-json.ts';
export { encodeExecution, encodeSetup, PgIdConnections, type PgExecution, type PgSetup } from '../loadgen/clients/pg-ids.ts';
// A secret the adapter makes or learns (a server's password): masked in every output from then on.
export { registerSecret } from '../util/redact.ts';
// A file beside the adapter's source (its native addon, its load client), whether the adapter
// runs from the build (dist/) or from the sources.
export { besideSource } from '../util/code-paths.ts';
// Participants whose engine runs in another language's host process (the participant protocol).
export { foreignParticipant, pythonHost } from '../adapters/foreign.ts';
// The harness's version (an engine written in this repository reports it as its own).
export { VECBENCH_VERSION } from '../version.ts';
