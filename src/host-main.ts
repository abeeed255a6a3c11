// The participant host's entry (forked by src/runner/client.ts): the runner's host, serving the
// measurement's messages and those of the features listed in src/features.ts.
import { HOST_FEATURES } from './features.ts';
import { serveHost } from './runner/host.ts';

serveHost(HOST_FEATURES);
