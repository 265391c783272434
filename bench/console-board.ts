// The supervisor board at issue 7's size: 50 recipients on the demo's own queues, 200 recipient
// events a second. The same measurement as bench/board.ts (which sizes the floor by BENCH_QUEUES and
// BENCH_RECIPIENTS), run at this size so the figures of bench/README.md's "console-board" section
// can be taken again; the members are spread over the demo's queues (all in Sales before).
process.env.BENCH_RECIPIENTS ??= "50";
process.env.BENCH_QUEUES ??= "1";
await import("./board.js");

export {};
