import { defineConfig } from "vitest/config";

// Files that may run two at a time: they hold no real-time media, no Chromium and assert no
// real-time figure. Each serve-mode server, SIP server and webhook receiver listens on port 0 and
// keeps its data in its own mkdtemp directory, so two files side by side share nothing.
const UNIT = "test/unit/**/*.test.{ts,tsx}";
const PARALLEL = [
  UNIT,
  "test/api/**/*.test.ts",
  "test/conformance/**/*.test.ts",
  "test/contracts/**/*.test.ts",
  "test/texting/**/*.test.ts",
  "test/events/**/*.test.ts",
  "test/sip/**/*.test.ts",
  "test/training/**/*.test.ts",
  // The hostile-input files that start no media and no browser: HTTP, store, texting, auth and
  // SIP-signalling abuse, each against its own server. (The SIP flood counts answers per second of
  // real time and the crash and CSP files run calls or Chromium: they stay in the serial tier.)
  "test/hostile/auth.test.ts",
  "test/hostile/demo-password.test.ts",
  "test/hostile/device-secrets.test.ts",
  "test/hostile/events-bindings.test.ts",
  "test/hostile/events-tokens.test.ts",
  "test/hostile/http-*.test.ts",
  "test/hostile/sip-contacts.test.ts",
  "test/hostile/sip-digest-replay.test.ts",
  "test/hostile/store-damaged.test.ts",
  "test/hostile/texting-fuzz.test.ts",
  // The queue engine on a real store with time run by hand (a manual scheduler, fake calls), and
  // startServer's manual clock over SIP registrations: no media legs, no real-time figure (session
  // 15: 3 of 3 runs green here, niced, beside other files, load 16-26). test/hostile/sip-fuzz was
  // tried with them and stays serial: its 3,000 mutations ran out of the test's time once and its
  // server missed the 20 s start once in three runs at that load.
  "test/callq/away-reasons.test.ts",
  "test/callq/dispositions.test.ts",
  "test/callq/recipient-day.test.ts",
  "test/callq/server-clock.test.ts",
  // The request path and the OpenAPI document on first use (HTTP only), and the speech cache
  // (espeak-ng renders to files; no media clock, no real-time figure).
  "test/http/**/*.test.ts",
  "test/sim/speech.test.ts",
];

// Files in the parallel tier that run real werift legs: isolated (a fresh process each), as the
// serial tier was until session 23 because werift legs in a process that had run another file's
// lost audio in session 13 (the serial tier no longer shows it; these were not tried together).
const PARALLEL_MEDIA = [
  "test/training/faults.test.ts",
  "test/training/live-run.test.ts",
  "test/training/one-way-audio.test.ts",
  "test/training/run-clock-queue.test.ts",
  "test/training/texts.test.ts",
];

// Files inside those directories that run alone in a group of their own, each for a real-time
// figure that a second worker on a 2-core machine can push past its bound.
const SERIAL_AMONG_PARALLEL: string[] = [
  // None since session 26: test/events/webhooks.test.ts raced a real 1 s timeout; its timeout runs
  // on the server's clock now, held by the test (green 3 of 3 beside two busy processes).
];

// Browser files against a serve-mode server (out/main/server.js in a child process): the test
// process itself holds no server, no werift leg and no media clock, only Playwright's client and
// HTTP/WebSocket clients. They run one at a time as the serial tier does (Chromium's real-time
// media), but in one process for all of them: each file's import of playwright-core and the
// helpers and a process of its own were paid per file. (The serial tiers, with in-process media,
// are in one process each too since session 23.)
const SERIAL_BROWSER = [
  "test/e2e/board-alerts.test.ts",
  "test/e2e/board-service-level.test.ts",
  "test/e2e/board-training-pause.test.ts",
  "test/e2e/console-agent-day.test.ts",
  "test/e2e/console-agent.test.ts",
  "test/e2e/console-board-large.test.ts",
  "test/e2e/console-board-reasons.test.ts",
  "test/e2e/console-bundle.test.ts",
  "test/e2e/console-callbacks.test.ts",
  "test/e2e/console-caller-history.test.ts",
  "test/e2e/console-disposition.test.ts",
  "test/e2e/console-narrow.test.ts",
  "test/e2e/console-queue-history.test.ts",
  "test/e2e/console-supervisor.test.ts",
  "test/e2e/login.test.ts",
  "test/e2e/shift-admin.test.ts",
  "test/e2e/shift-agent-work.test.ts",
  "test/e2e/shift-agent.test.ts",
  "test/e2e/shift-supervisor.test.ts",
  "test/e2e/slow-link-admin.test.ts",
  "test/e2e/slow-link-supervisor.test.ts",
  "test/e2e/texting.test.ts",
  "test/e2e/training-faults.test.ts",
  "test/e2e/training-narrow.test.ts",
  "test/e2e/training-report.test.ts",
  "test/e2e/wallboard.test.ts",
  "test/hostile/csp.test.ts",
];

// Files of the serial tier (one at a time) in a stream of their own (project
// `serial-late`, scripts/test.mjs; until session 22 the second stream ran them after
// serial-browser) so that the streams end together: the
// serial stream was ~960 s of wall time against serial-browser's ~580 s (session 17's CI). None
// plays a fake microphone or asserts a real-time figure: browser files on an in-process server that
// check pages and records, serve-mode start and stop files, the store-crash file (its recording
// check is a share of the tone over the middle of the recording), and small files whose process
// start was most of their time. They run beside the serial tier's call files exactly as
// serial-browser's do. Session 18's CI with the first 14: serial 870 s, this stream 723 s; four
// more browser files (~55 s with their starts) moved then.
const SERIAL_LATE = [
  "test/e2e/console-admin.test.ts",
  "test/e2e/console-call-dock.test.ts",
  "test/e2e/console-training.test.ts",
  "test/e2e/jssip-session-timers.test.ts",
  "test/e2e/webhooks-real-call.test.ts",
  "test/e2e/console-directory.test.ts",
  "test/e2e/softphone-register.test.ts",
  "test/hostile/store-crash.test.ts",
  "test/serve/stop-with-calls.test.ts",
  "test/serve/start-first-requests.test.ts",
  "test/serve/start-code-cache.test.ts",
  "test/serve/start-bundle.test.ts",
  "test/media/recording-check.test.ts",
  "test/media/recording-time.test.ts",
  "test/calls/do-not-disturb.test.ts",
  "test/calls/media-overload.test.ts",
  "test/electron/app.test.ts",
  "test/electron/packaging.test.ts",
  // Session 21 (fresh25's CI of 39b76eb: the serial stream 740 s, this one 583 s): four serial
  // files with no browser, no werift phone in the test process and no audio check, ~73 s of the
  // serial stream's span. events-limits (serve-mode servers and WebSocket clients), sip-fuzz and
  // sip-flood (a serve-mode server and SIP over WebSocket: their figures are counts, not rates),
  // worker-warm (serve-mode starts and stops; its simulated call is checked answered, not heard).
  // Here each still runs alone in its stream beside one file of the other, as in the serial tier.
  "test/hostile/events-limits.test.ts",
  "test/hostile/sip-fuzz.test.ts",
  "test/hostile/sip-flood.test.ts",
  "test/media/worker-warm.test.ts",
  // Session 22: serial-late runs as a third stream of its own (scripts/test.mjs), beside the
  // serial tier and serial-browser, and takes these serial files with it so that the three end
  // together (fresh31's spans: serial 850 s, serial-browser ~500 s, serial-late ~370 s before).
  // They are serial files like the others: each alone in its stream, in a process of its own.
  "test/e2e/console-recordings.test.ts",
  "test/e2e/training-shift.test.ts",
  "test/e2e/console-call-truth.test.ts",
  "test/calls/transfer-targets.test.ts",
  "test/calls/forward-bridge.test.ts",
  "test/calls/commands.test.ts",
];

// One runner for every tier. Browser tests drive Debian Chromium through playwright-core,
// and the serve-mode tests run the built out/main/server.js, so `npm test` builds first.
// The serial tier's media files (werift legs in the test process and its media workers, audio
// checked within a second of connecting): still a fresh process each, in a project of their own
// that `npm test` runs in the serial stream after the serial tier (scripts/test.mjs). In the
// tier's one process, after a dozen call and browser files, test/media/werift-loop's first audio
// check fell short twice in four runs (a worker's 440 Hz heard in 17% of its last 500 ms at load
// ~10; 40 packets in the first second, quiet), and never in its own process.
const SERIAL_MEDIA = "test/media/**/*.test.ts";

export default defineConfig({
  test: {
    environment: "node",
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: [UNIT],
          exclude: SERIAL_AMONG_PARALLEL,
          // The unit files share one module graph per worker: they stub no globals and mock no
          // modules, and importing each file's modules afresh cost more than its tests.
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 0 },
        },
      },
      {
        extends: true,
        test: {
          name: "parallel",
          include: PARALLEL.filter((glob) => glob !== UNIT),
          exclude: [...SERIAL_AMONG_PARALLEL, ...PARALLEL_MEDIA],
          // As the unit files: each starts its own server (port 0, its own mkdtemp directory),
          // none mocks a module, stubs a global or changes process state, so a worker imports the
          // server's modules once for all its files instead of once a file.
          isolate: false,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          // Named to sort before "parallel": vitest queues the projects of one group by name, and
          // these five files (10-16 s each) queued last left one core idle at the group's end
          // (fresh43: the last of them started at 125 s of a 145 s group and ran alone).
          name: "media-parallel",
          include: PARALLEL_MEDIA,
          maxWorkers: 2,
          sequence: { groupOrder: 1 },
        },
      },
      {
        extends: true,
        test: {
          name: "realtime",
          include: SERIAL_AMONG_PARALLEL,
          maxWorkers: 1,
          sequence: { groupOrder: 2 },
        },
      },
      {
        extends: true,
        test: {
          name: "serial",
          include: ["test/**/*.test.{ts,tsx}"],
          exclude: [...PARALLEL, ...SERIAL_BROWSER, ...SERIAL_LATE, SERIAL_MEDIA],
          // One file at a time, after the other groups: the call and browser tests run real
          // WebRTC media (werift, Chromium) on the shared 20 ms clock, and two of them side by
          // side on a 2-core machine starve each other.
          maxWorkers: 1,
          // All its files in one process, one after the other (since session 23): a fresh process
          // a file paid the import of werift, playwright-core, Fastify and the server's modules
          // again for each (~2.3 s a file on a quiet machine). bench/suite-cpu.ts, this tier alone
          // at load 3-6: 320 s of CPU and 486 s of wall isolated, 236 s and 394 s in one process.
          // Session 13 had isolated it because test/callq/queue-calls.test.ts lost the agent's
          // audio after test/callq/recipient-module.test.ts in one process; with today's media
          // code that pair in that order passed 4 of 4 runs, and the whole tier 1 of 1. Its media
          // files are a project of their own, still isolated (SERIAL_MEDIA).
          isolate: false,
          sequence: { groupOrder: 3 },
          // One Chromium for the tier's browser files (each connects with contexts of its own,
          // closed with the file), instead of a launch a file: test/helpers/shared-chromium.ts.
          // The lab pages (phone-lab, jssip-lab) bundled once a run, not once a file:
          // test/helpers/lab-pages.ts.
          globalSetup: ["test/helpers/shared-chromium.ts", "test/helpers/lab-pages.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "serial-browser",
          include: SERIAL_BROWSER,
          // One file at a time after the serial tier (a group of its own: two groups with the same
          // order would run side by side, as one pool of workers for both projects' files), all in
          // one process (SERIAL_BROWSER above). `npm test` runs it in a vitest process of its own
          // beside the serial tier's and serial-late's (scripts/test.mjs; one vitest run with
          // SWITCHBOARD_SERIAL_STREAMS=one).
          maxWorkers: 1,
          isolate: false,
          sequence: { groupOrder: 4 },
          globalSetup: ["test/helpers/shared-chromium.ts", "test/helpers/lab-pages.ts"],
          // Its one process launches a Chromium of its own at its first browser file and keeps it
          // for the others (test/helpers/browser.ts, CHROMIUM_IN_PROCESS_ENV): no relay of every
          // protocol message through the vitest main process that holds the shared one. `0` from
          // outside connects to the shared one again (to compare the two).
          env: { SWITCHBOARD_CHROMIUM_IN_PROCESS: process.env.SWITCHBOARD_CHROMIUM_IN_PROCESS ?? "1" },
        },
      },
      {
        extends: true,
        test: {
          name: "serial-media",
          include: [SERIAL_MEDIA],
          exclude: SERIAL_LATE,
          maxWorkers: 1,
          // After the other tiers in a one-run `npm test` (SWITCHBOARD_SERIAL_STREAMS=one); in the
          // serial stream's run, after the serial tier's files.
          sequence: { groupOrder: 6 },
        },
      },
      {
        extends: true,
        test: {
          name: "serial-late",
          include: SERIAL_LATE,
          // As the serial tier (one file at a time, all in one process), after serial-browser: `npm
          // test` runs it as a third stream, a vitest process of its own beside the other two.
          // In one process rather than a process a file (session 23, bench/suite-cpu.ts, this
          // stream alone at load 5-8): 373 s of CPU and 422 s of wall isolated, 250 s and 324 s.
          maxWorkers: 1,
          isolate: false,
          sequence: { groupOrder: 5 },
          globalSetup: ["test/helpers/shared-chromium.ts", "test/helpers/lab-pages.ts"],
        },
      },
    ],
  },
});
