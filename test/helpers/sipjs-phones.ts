// The demo users' softphones as sip.js user agents in Node, registered over /sip on a real server,
// their media werift legs of a media engine of the test's own (so the audio is real and can be
// listened to), placing and taking calls as the console's sip.js does.
import WebSocket from "ws";
import {
  Inviter,
  Registerer,
  RegistererState,
  SessionState,
  UserAgent,
  type BodyAndContentType,
  type Invitation,
  type Session,
  type SessionDescriptionHandler,
} from "sip.js";
import { MediaEngine, type WebRtcLeg } from "../../server/media/index.js";
import type { TestApi } from "./api.js";
import { frameWiseShare } from "./tone-windows.js";

export const DEMO_REALM = "demo.switchboard.local";
// The phones share no clock with the server; they send every frame however late (fake-signalling's reason).
const PHONE_LEG = { maxSendLatenessMs: Infinity };

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

export async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await sleep(20);
  }
}

/**
 * A session description handler over a werift leg: the first description it gives is an offer
 * (a call it places) or the answer to the offer it was given (a call it takes); nothing after.
 */
class LegSdh implements SessionDescriptionHandler {
  #offered = false;
  #answered = false;
  #remoteOffer: string | undefined;
  constructor(readonly leg: WebRtcLeg) {}
  close(): void {
    void this.leg.close("hangup");
  }
  hasDescription(contentType: string): boolean {
    return contentType === "application/sdp";
  }
  async getDescription(): Promise<BodyAndContentType> {
    const offer = this.#remoteOffer;
    if (offer !== undefined) {
      this.#remoteOffer = undefined;
      return { body: await this.leg.acceptOffer(offer), contentType: "application/sdp" };
    }
    if (this.#offered) throw new Error("this phone makes one offer a call");
    this.#offered = true;
    return { body: await this.leg.createOffer(), contentType: "application/sdp" };
  }
  async setDescription(sdp: string): Promise<void> {
    if (this.#offered && !this.#answered) {
      this.#answered = true;
      await this.leg.acceptAnswer(sdp);
      return;
    }
    this.#remoteOffer = sdp;
  }
  sendDtmf(): boolean {
    return false;
  }
}

export interface SipjsPhone {
  username: string;
  deviceId: string;
  ua: UserAgent;
  /** Every call offered to the phone, in order. */
  invitations: Invitation[];
}

export interface TwoWayCall {
  out: Inviter;
  in: Invitation;
}

/** The SIP Call-ID of a session: the uuid of its channel on the server. */
export function callIdOf(session: Session): string {
  const id = session.dialog?.callId;
  if (!id) throw new Error("the session has no dialog");
  return id;
}

export function demoUri(user: string): NonNullable<ReturnType<typeof UserAgent.makeURI>> {
  const made = UserAgent.makeURI(`sip:${user}@${DEMO_REALM}`);
  if (!made) throw new Error(`bad uri for ${user}`);
  return made;
}

export class SipjsPhones {
  readonly media = new MediaEngine();
  readonly #api: TestApi;
  readonly #accountId: string;
  readonly #phones = new Map<string, SipjsPhone>();
  readonly #legs = new WeakMap<Session, WebRtcLeg>();
  readonly #nodeWebSocket: unknown;

  constructor(api: TestApi, accountId: string) {
    this.#api = api;
    this.#accountId = accountId;
    const globals = globalThis as { WebSocket?: unknown };
    this.#nodeWebSocket = globals.WebSocket;
    // sip.js's transport uses the browser's WebSocket, which Node 20 lacks.
    globals.WebSocket = WebSocket;
  }

  legOf(session: Session): WebRtcLeg {
    const leg = this.#legs.get(session);
    if (!leg) throw new Error("the session has no media leg");
    return leg;
  }

  /** The demo user's softphone as a registered sip.js user agent (one per user). */
  async phone(username: string): Promise<SipjsPhone> {
    const known = this.#phones.get(username);
    if (known) return known;
    const devices = (await this.#api.server.store.account(this.#accountId, "devices")).all();
    const device = devices.find((d) => (d.data.sip as { username?: string } | undefined)?.username === username);
    const sip = device?.data.sip as { username: string; password: string } | undefined;
    if (!device || !sip) throw new Error(`no softphone for ${username}`);
    const invitations: Invitation[] = [];
    const ua = new UserAgent({
      uri: UserAgent.makeURI(`sip:${sip.username}@${DEMO_REALM}`),
      authorizationUsername: sip.username,
      authorizationPassword: sip.password,
      transportOptions: { server: `${this.#api.url.replace(/^http/, "ws")}/sip` },
      sessionDescriptionHandlerFactory: (session) => {
        const leg = this.media.createLeg(PHONE_LEG);
        this.#legs.set(session, leg);
        return new LegSdh(leg);
      },
      logConfiguration: false,
      logLevel: "error",
      delegate: { onInvite: (invitation) => invitations.push(invitation) },
    });
    const made: SipjsPhone = { username, deviceId: device.id, ua, invitations };
    this.#phones.set(username, made);
    await ua.start();
    const registerer = new Registerer(ua, { expires: 300 });
    await registerer.register();
    await until(() => registerer.state === RegistererState.Registered, `${username} registered`);
    return made;
  }

  /** The next call offered to `to` after `before` offers, answered, its media up. */
  async answer(to: SipjsPhone, before: number): Promise<Invitation> {
    await until(() => to.invitations.length > before, `${to.username} offered a call`);
    const taken = to.invitations[before];
    if (!taken) throw new Error("no invitation");
    await taken.accept();
    await until(() => taken.state === SessionState.Established && this.legOf(taken).state === "connected", `${to.username}'s call up`);
    return taken;
  }

  /** `from` dials `number`; `to` takes the call; each says its tone once the media is up. */
  async call(from: SipjsPhone, number: string, to: SipjsPhone, says: [number, number]): Promise<TwoWayCall> {
    const before = to.invitations.length;
    const out = new Inviter(from.ua, demoUri(number));
    await out.invite();
    const taken = await this.answer(to, before);
    await until(() => out.state === SessionState.Established && this.legOf(out).state === "connected", "the caller's call up");
    await this.say(out, says[0]);
    await this.say(taken, says[1]);
    return { out, in: taken };
  }

  async say(session: Session, frequency: number): Promise<void> {
    this.legOf(session).play(await this.media.player(`tone_stream://${frequency}`));
  }

  /** The share of `frequency` in what the session's phone hears for half a second. */
  async hears(session: Session, frequency: number): Promise<number> {
    const leg = this.legOf(session);
    // Audio in flight settles first.
    await sleep(150);
    const samples: number[] = [];
    const stop = this.media.clock.subscribe((tick) => samples.push(...leg.incoming.read(tick)));
    await sleep(500);
    stop();
    return frameWiseShare(samples, frequency);
  }

  /**
   * Each session's share of the other's tone, once both hear it or after ten tries (a transfer's
   * audio takes a moment to switch): the caller asserts on them.
   */
  async talking(a: Session, aSays: number, b: Session, bSays: number): Promise<[number, number]> {
    let heard: [number, number] = [0, 0];
    for (let i = 0; i < 10; i++) {
      heard = await Promise.all([this.hears(a, bSays), this.hears(b, aSays)]);
      if (heard[0] > 0.9 && heard[1] > 0.9) break;
    }
    return heard;
  }

  async close(): Promise<void> {
    await Promise.all([...this.#phones.values()].map((p) => p.ua.stop()));
    (globalThis as { WebSocket?: unknown }).WebSocket = this.#nodeWebSocket;
    await this.media.close();
  }
}
