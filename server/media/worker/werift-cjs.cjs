// werift's CommonJS build, the one the main thread loads (server/media/werift.ts), for the media
// worker's entry to import statically so the build bundles it into the worker's file. Not its
// ESM build: bundled, that one gave a softphone silence through the built worker.
/* global module, require */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- a CommonJS file: require is how it loads the build
module.exports = require("werift");
