// The demo account seeded on first run, so the console works at once: users, their softphones,
// two queues, callflows, feature codes and hold music. Idempotent: each piece is found by its
// natural key (username, device name, queue name, number, media name) and made only if missing.
import { createReadStream, existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import type { Logger } from "pino";
import type { RandomSource } from "./clock.js";
import type { DocData, Store } from "./store/index.js";
import { credentialHashes } from "./auth/credentials.js";
import { deviceDefaults } from "./api/devices.js";
import { userDefaults } from "./api/users.js";
import { seedTextingNumbers } from "./texting/demo.js";

export const DEMO_ACCOUNT_NAME = "demo";
/** Serve mode's documented password; the desktop app seeds a random one (demoPassword()). */
export const DEMO_PASSWORD = "switchboard";

const PRIVATE_FILE = 0o600;
const PRIVATE_DIR = 0o700;
/** What a stored demo password may look like: printable, no spaces, a sane length. */
const STORED_PASSWORD = /^[\x21-\x7e]{12,128}$/;

/**
 * This install's demo password, kept in `file`: read back when present, else a new random one
 * written there readable by its owner only. Nobody else on the machine can read it, so the demo
 * users on 127.0.0.1 are not open to every local account as the documented password would be.
 */
export async function demoPassword(file: string, random: RandomSource): Promise<string> {
  const stored = await readStoredPassword(file);
  if (stored !== null) {
    // A file made by hand or copied with looser bits is tightened, not trusted as it is.
    await chmod(file, PRIVATE_FILE);
    return stored;
  }
  await mkdir(dirname(file), { recursive: true, mode: PRIVATE_DIR });
  const password = random.bytes(12).toString("base64url");
  try {
    await writeFile(file, `${password}\n`, { mode: PRIVATE_FILE, flag: "wx" });
  } catch (err) {
    // A second start racing this one wrote it first: use theirs.
    const raced = (err as NodeJS.ErrnoException).code === "EEXIST" ? await readStoredPassword(file) : null;
    if (raced === null) throw err;
    return raced;
  }
  return password;
}

async function readStoredPassword(file: string): Promise<string | null> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw err;
  }
  const password = text.trim();
  if (!STORED_PASSWORD.test(password)) throw new Error(`${file} does not hold a demo password (12 to 128 printable characters); delete it to have a new one made`);
  return password;
}

interface DemoLogin {
  username: string;
  first_name: string;
  last_name: string;
  priv_level: "admin" | "user";
  extension: string;
  agent: boolean;
  call_monitor: boolean;
}

export const DEMO_LOGINS: readonly DemoLogin[] = [
  { username: "admin", first_name: "Ada", last_name: "Admin", priv_level: "admin", extension: "1001", agent: false, call_monitor: true },
  { username: "agent1", first_name: "Alex", last_name: "Agent", priv_level: "user", extension: "1002", agent: true, call_monitor: false },
  { username: "agent2", first_name: "Blair", last_name: "Agent", priv_level: "user", extension: "1003", agent: true, call_monitor: false },
  { username: "agent3", first_name: "Casey", last_name: "Agent", priv_level: "user", extension: "1004", agent: true, call_monitor: false },
  { username: "supervisor", first_name: "Sam", last_name: "Supervisor", priv_level: "user", extension: "1005", agent: true, call_monitor: true },
];

const DEMO_QUEUES = [
  { name: "Sales", number: "5001" },
  { name: "Support", number: "5002" },
] as const;

const FEATURE_CODES = [
  { number: "*20", action: "login", name: "Queue login" },
  { number: "*21", action: "ready", name: "Queue ready" },
  { number: "*22", action: "away", name: "Queue away" },
  { number: "*23", action: "logout", name: "Queue logout" },
] as const;

export const HOLD_MUSIC_FILE = "hold-music.wav";

export interface DemoOptions {
  assetsDir: string;
  logger: Logger;
  /** The demo users' password; the documented DEMO_PASSWORD unless told. */
  password?: string;
}

export async function seedDemo(store: Store, options: DemoOptions): Promise<string> {
  const password = options.password ?? DEMO_PASSWORD;
  const accounts = await store.global("accounts");
  let account = accounts.all().find((a) => a.data.name === DEMO_ACCOUNT_NAME);
  if (!account) {
    account = await accounts.create({
      name: DEMO_ACCOUNT_NAME,
      realm: "demo.switchboard.local",
      language: "en-US",
      timezone: "UTC",
      enabled: true,
      blacklists: [],
      pvt_api_key: store.random.bytes(32).toString("hex"),
    });
    options.logger.info({ account_id: account.id }, "seeding the demo account");
  }
  const accountId = account.id;
  // The account's collections open together, and the documents of one collection are made
  // together (each write's own journal line, acknowledged as before, but one append for the lines
  // queued at once instead of one append and one turn of the loop each): a first start's seed
  // costs fewer turns and writes (issue 17, "Start"). Each document is still made in the order
  // below, each found by its natural key first, so a second start makes none.
  const [media, users, devices, queues, callflows] = await Promise.all([
    store.account(accountId, "media"),
    store.account(accountId, "users"),
    store.account(accountId, "devices"),
    store.account(accountId, "callq_queues"),
    store.account(accountId, "callflows"),
  ]);

  const holdMusicSeeded = (async () => {
    let holdMusic = media.all().find((m) => m.data.name === "Hold music");
    if (!holdMusic) {
      holdMusic = await media.create({
        name: "Hold music",
        description: "Generated for Switchboard; free of copyright",
        media_source: "upload",
        streamable: true,
        content_type: "audio/wav",
      });
    }
    const holdMusicPath = join(options.assetsDir, HOLD_MUSIC_FILE);
    // Any audio on it will do: an admin may have replaced the shipped music through the API.
    if (Object.keys(holdMusic.attachments ?? {}).length === 0) {
      if (existsSync(holdMusicPath)) {
        await media.putAttachment(holdMusic.id, HOLD_MUSIC_FILE, createReadStream(holdMusicPath), "audio/wav");
      } else {
        options.logger.warn({ path: holdMusicPath }, "hold music asset missing; the demo queues will play silence");
      }
    }
    return holdMusic.id;
  })();

  const seededUsers = await Promise.all(
    DEMO_LOGINS.map(async (login) => {
      const found = users.all().find((u) => u.data.username === login.username);
      // Users seeded before with the documented password move to this install's own; a password
      // the user chose since is theirs and stays.
      const existing =
        found !== undefined && password !== DEMO_PASSWORD && found.data.pvt_md5_auth === credentialHashes(login.username, DEMO_PASSWORD).pvt_md5_auth
          ? await users.update(found.id, { ...found.data, ...credentialHashes(login.username, password) })
          : found;
      const user =
        existing ??
        (await users.create(
          userDefaults({
            username: login.username,
            first_name: login.first_name,
            last_name: login.last_name,
            email: `${login.username}@demo.switchboard.local`,
            priv_level: login.priv_level,
            enabled: true,
            presence_id: login.extension,
            caller_id: { internal: { name: `${login.first_name} ${login.last_name}`, number: login.extension } },
            callq: {
              enabled: login.agent,
              pin: login.extension,
              permissions: login.call_monitor ? ["call_monitor"] : [],
            },
            ...credentialHashes(login.username, password),
          }),
        ));
      return [login.username, user.id] as const;
    }),
  );
  const userIds = new Map<string, string>(seededUsers);
  // Each user texts from an E.164 number made from their extension (1001 -> +14155550101).
  const textingSeeded = seedTextingNumbers(store, accountId, DEMO_LOGINS.map((l) => ({ userId: userIds.get(l.username) ?? "", extension: l.extension })));

  const devicesSeeded = Promise.all(
    DEMO_LOGINS.map(async (login) => {
      const name = `${login.username} softphone`;
      if (devices.all().some((d) => d.data.name === name)) return;
      await devices.create(demoDevice(store.random, name, userIds.get(login.username) ?? "", login.username));
    }),
  );

  const members: Record<string, string> = {};
  for (const login of DEMO_LOGINS) {
    const id = userIds.get(login.username);
    if (login.agent && id) members[id] = "";
  }
  const holdMusicId = await holdMusicSeeded;
  const seededQueues = await Promise.all(
    DEMO_QUEUES.map(async (q) => {
      const existing = queues.all().find((d) => d.data.name === q.name);
      const queue =
        existing ??
        (await queues.create({
          name: q.name,
          queue_type: "queue_basic",
          queue_router: "route_round_robin",
          timeout: 3600,
          ring_timeout: 20,
          agent_wrapup_time: 10,
          tick_time: 1000,
          hold_treatment: holdMusicId,
          force_away_on_reject: false,
          timeout_if_size_exceeds: 0,
          timeout_immediately_if_empty: false,
          members,
        }));
      return [q.name, queue.id] as const;
    }),
  );
  const queueIds = new Map<string, string>(seededQueues);

  const taken = new Set(callflows.all().flatMap((c) => (Array.isArray(c.data.numbers) ? c.data.numbers : [])));
  const wanted: DocData[] = [
    ...DEMO_LOGINS.map((login) => ({
      name: `${login.first_name} ${login.last_name}`,
      numbers: [login.extension],
      patterns: [],
      flow: { module: "user", data: { id: userIds.get(login.username) }, children: {} },
    })),
    ...DEMO_QUEUES.map((q) => ({
      name: `${q.name} queue`,
      numbers: [q.number],
      patterns: [],
      flow: { module: "callq", data: { id: queueIds.get(q.name) }, children: {} },
    })),
    ...FEATURE_CODES.map((f) => ({
      name: f.name,
      numbers: [f.number],
      patterns: [],
      featurecode: { name: `callq_${f.action}`, number: f.number.slice(1) },
      flow: { module: "callq_recipient", data: { action: f.action, link_method: "both" }, children: {} },
    })),
  ];
  await Promise.all([
    ...wanted.filter((callflow) => !(callflow.numbers as string[]).some((n) => taken.has(n))).map((callflow) => callflows.create(callflow)),
    textingSeeded,
    devicesSeeded,
  ]);
  return accountId;
}

function demoDevice(random: RandomSource, name: string, ownerId: string, username: string): DocData {
  const hex = (bytes: number) => random.bytes(bytes).toString("hex");
  return deviceDefaults(
    { name, owner_id: ownerId, device_type: "softphone", media: { audio: { codecs: ["PCMU", "PCMA"] } }, sip: { username } },
    hex,
  );
}
