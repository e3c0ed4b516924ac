// Loaded by `make soak` through NODE_OPTIONS=--require (harness/accounting/gclog.py): V8 prints one line per
// garbage collection to stdout, in every process that inherits NODE_OPTIONS (each cluster worker too).
// `--trace-gc` itself is refused in NODE_OPTIONS; this is the use Node's v8 docs show for
// setFlagsFromString: https://nodejs.org/api/v8.html#v8setflagsfromstringflags
require('node:v8').setFlagsFromString('--trace-gc');
