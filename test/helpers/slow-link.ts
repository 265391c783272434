// A slow link between a console page and its server, for the slow-link-* browser tests, as a
// console in remote mode meets it: every request to the REST and texting APIs is held on its way
// and its answer on the way back, 300-1,500 ms in all by default, each delay drawn from a seeded
// random (mulberry32), so a failure can be replayed with its seed (SWITCHBOARD_SLOW_LINK_SEED).
// The seed fixes the delays in the order requests are made, not which request meets which: a
// replay meets the same delays, in an order as close as the page's own timing allows. Requests held
// for different times reach the server out of order, as on a real link with several connections.
// The event websocket and SIP are left alone (they are their own sockets). `hold` holds chosen
// requests until the test lets them go, on top of the delay.
import type { APIResponse, Locator, Page, Request, Route } from "playwright-core";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { expect } from "vitest";
import { SCREENSHOTS } from "./console-page.js";
import { overflowOf } from "./narrow.js";

export const SLOW_LINK_SEED_ENV = "SWITCHBOARD_SLOW_LINK_SEED";
/**
 * Set to 1 to slow the event websocket too: each message held half the link's delay (its own draw)
 * and delivered in the order sent. Off by default: an exploration, not yet a tier's load.
 */
export const SLOW_LINK_EVENTS_ENV = "SWITCHBOARD_SLOW_LINK_EVENTS";

/** The seed from SWITCHBOARD_SLOW_LINK_SEED when set (a positive integer), else `fallback`. */
export function slowLinkSeed(fallback: number): number {
  const given = Number(process.env[SLOW_LINK_SEED_ENV]);
  return Number.isInteger(given) && given > 0 ? given : fallback;
}

/** mulberry32: a small seeded generator, uniform in [0, 1). */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A request of the console to its server's APIs (not its page, scripts or media). */
export function isApiRequest(url: URL): boolean {
  return url.pathname.startsWith("/v2/") || url.pathname.startsWith("/texting/");
}

export interface HeldRequests {
  /** Resolves with the first request held, once its answer has come back from the server (held from the page). */
  answered: Promise<Request>;
  /** Resolves with the first request held, as soon as it is held (not yet sent). */
  seen: Promise<Request>;
  /** How many requests have been held so far. */
  seenSoFar(): number;
  /** How many of the held requests the server has answered so far (`after`). */
  answeredSoFar(): number;
  /** Lets the held requests (and their answers) go on. */
  release(): void;
}

export interface SlowLink {
  readonly seed: number;
  /**
   * Holds the next request `match` accepts (only that one; with `every`, each one until the
   * release): `before` holds it before it is sent (the server has not seen it), `after` holds its
   * answer (the server answered it at once, the page has not). Released by the answer's release().
   */
  hold(match: (request: Request) => boolean, where: "before" | "after", options?: { every?: boolean }): Promise<HeldRequests>;
}

export async function slowLink(page: Page, seed: number, range: { min: number; max: number } = { min: 300, max: 1_500 }): Promise<SlowLink> {
  const random = seeded(seed);
  await page.route(isApiRequest, async (route) => {
    const total = range.min + Math.floor(random() * (range.max - range.min + 1));
    try {
      await sleep(total / 2);
      const response = await route.fetch();
      await sleep(total / 2);
      await route.fulfill({ response });
    } catch {
      // The server could not be reached, or the page went while its request was held.
      await route.abort().catch(() => undefined);
    }
  });
  if (process.env[SLOW_LINK_EVENTS_ENV] === "1") {
    // A delay of its own per message, but never before the one sent before it (no reordering,
    // and no piling up behind a long one: each waits for its own time or its predecessor's).
    const relay = (send: (message: string | Buffer) => void) => {
      let last = 0;
      return (message: string | Buffer) => {
        const at = Math.max(last, Date.now() + (range.min + random() * (range.max - range.min)) / 2);
        last = at;
        setTimeout(() => {
          try {
            send(message);
          } catch {
            // The socket closed meanwhile.
          }
        }, at - Date.now());
      };
    };
    await page.routeWebSocket(
      (url) => url.pathname === "/events",
      (ws) => {
        const server = ws.connectToServer();
        server.onMessage(relay((message) => ws.send(message)));
        ws.onMessage(relay((message) => server.send(message)));
        server.onClose((code, reason) => void ws.close({ code, reason }).catch(() => undefined));
        ws.onClose((code, reason) => void server.close({ code, reason }).catch(() => undefined));
      },
    );
  }
  return {
    seed,
    async hold(match, where, options = {}) {
      let armed = true;
      let open = false;
      let release: () => void = () => undefined;
      const released = new Promise<void>((resolve) => (release = resolve));
      void released.then(() => (open = true));
      let seen: (request: Request) => void = () => undefined;
      let answered: (request: Request) => void = () => undefined;
      let answeredCount = 0;
      let seenCount = 0;
      const seenOnce = new Promise<Request>((resolve) => (seen = resolve));
      const answeredOnce = new Promise<Request>((resolve) => (answered = resolve));
      // Registered after the slow link's route, so it runs first; it hands the request on to it.
      await page.route(isApiRequest, async (route: Route) => {
        const request = route.request();
        // Once released, `every` holds no more; a single hold may be released before its request comes.
        if (!armed || (options.every === true && open) || !match(request)) return route.fallback();
        if (options.every !== true) armed = false;
        seenCount += 1;
        seen(request);
        try {
          if (where === "before") {
            await released;
            await route.fallback();
            return;
          }
          let response: APIResponse | undefined;
          try {
            response = await route.fetch();
          } finally {
            answeredCount += 1;
            answered(request);
          }
          await released;
          await route.fulfill({ response });
        } catch {
          // The server could not be reached, or the page went while the request was held.
          await route.abort().catch(() => undefined);
        }
      });
      return { seen: seenOnce, answered: answeredOnce, seenSoFar: () => seenCount, answeredSoFar: () => answeredCount, release };
    },
  };
}

/**
 * Waits up to `timeoutMs` for `locator` to be shown, then soft-checks that it was: a check that only
 * the fixed console passes fails as one soft failure (with `what`, the words of what was expected,
 * computed after the wait when a function), so one run without the fixes shows every check that fails.
 */
export async function shownWithin(locator: Locator, what: string | (() => Promise<string>), timeoutMs = 10_000): Promise<boolean> {
  const shown = await locator.waitFor({ timeout: timeoutMs }).then(
    () => true,
    () => false,
  );
  expect.soft(shown, typeof what === "string" ? what : await what()).toBe(true);
  return shown;
}

/** The widths a slow-link text is looked at: the desktop window and a narrow one. */
export const SHOT_WIDTHS = [1280, 400] as const;

/**
 * Screenshots of the page as it is now, 1280 and 400 px wide (test-results/screenshots/
 * slow-link-<name>-<width>.png), and a soft check that nothing sticks out at 400 px
 * (test/helpers/narrow.ts). The window is put back to its width after. With `at`, that part of the
 * page is scrolled into view at each width (a panel below the fold).
 */
export async function shotsAtWidths(page: Page, name: string, at?: Locator): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  const before = page.viewportSize() ?? { width: 1280, height: 860 };
  for (const width of SHOT_WIDTHS) {
    await page.setViewportSize({ width, height: before.height });
    await at?.scrollIntoViewIfNeeded();
    await page.screenshot({ path: join(SCREENSHOTS, `slow-link-${name}-${width}.png`) });
    if (width < 700) expect.soft(await overflowOf(page), `what sticks out of "${name}" at ${width} px`).toEqual([]);
  }
  await page.setViewportSize(before);
}
