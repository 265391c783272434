// One connection's subscriptions, indexed two ways: by (account, binding) so a subscribe finds
// what it already holds in constant time, and per account as a tree of binding segments so an
// event finds the bindings it matches by walking its routing key, not by testing every binding.
// Matching follows bindingMatches: `*` one segment, `#` the rest (whatever follows it), and
// `qubicle.` read as `callq.`.
import { normaliseBinding } from "./bus.js";

export interface Subscription {
  readonly accountId: string;
  /** As the client spelled it: the `subscribed_key` of what it delivers. */
  readonly binding: string;
  /** Events of a higher sequence are this subscription's to deliver. */
  from: number;
  /** Subscription order: when several bindings deliver one event, the earliest names it. */
  readonly order: number;
}

interface Node {
  readonly children: Map<string, Node>;
  /** Bindings that end at this node. */
  readonly ending: Set<Subscription>;
  /** Bindings with `#` at this position: they take every key that got this far. */
  readonly rest: Set<Subscription>;
}

const newNode = (): Node => ({ children: new Map(), ending: new Set(), rest: new Set() });
const keyOf = (accountId: string, binding: string): string => `${accountId} ${binding}`;

export class BindingIndex {
  readonly #byKey = new Map<string, Subscription>();
  readonly #roots = new Map<string, Node>();
  readonly #perAccount = new Map<string, number>();
  #order = 0;

  get size(): number {
    return this.#byKey.size;
  }

  get(accountId: string, binding: string): Subscription | undefined {
    return this.#byKey.get(keyOf(accountId, binding));
  }

  add(accountId: string, binding: string, from: number): Subscription {
    const subscription: Subscription = { accountId, binding, from, order: this.#order++ };
    this.#byKey.set(keyOf(accountId, binding), subscription);
    this.#perAccount.set(accountId, (this.#perAccount.get(accountId) ?? 0) + 1);
    let root = this.#roots.get(accountId);
    if (!root) this.#roots.set(accountId, (root = newNode()));
    let node = root;
    for (const segment of normaliseBinding(binding).split(".")) {
      if (segment === "#") {
        node.rest.add(subscription);
        return subscription;
      }
      let child = node.children.get(segment);
      if (!child) node.children.set(segment, (child = newNode()));
      node = child;
    }
    node.ending.add(subscription);
    return subscription;
  }

  remove(subscription: Subscription): void {
    const key = keyOf(subscription.accountId, subscription.binding);
    if (this.#byKey.get(key) !== subscription) return;
    this.#byKey.delete(key);
    const left = (this.#perAccount.get(subscription.accountId) ?? 1) - 1;
    if (left === 0) {
      this.#perAccount.delete(subscription.accountId);
      this.#roots.delete(subscription.accountId);
      return;
    }
    this.#perAccount.set(subscription.accountId, left);
    const root = this.#roots.get(subscription.accountId);
    if (root) unlink(root, normaliseBinding(subscription.binding).split("."), 0, subscription);
  }

  /** Every subscription, in subscription order. */
  all(): IterableIterator<Subscription> {
    return this.#byKey.values();
  }

  accounts(): IterableIterator<string> {
    return this.#perAccount.keys();
  }

  holds(accountId: string): boolean {
    return this.#perAccount.has(accountId);
  }

  /** The account's bindings, in subscription order. */
  bindingsOf(accountId: string): string[] {
    const bindings: string[] = [];
    for (const s of this.#byKey.values()) if (s.accountId === accountId) bindings.push(s.binding);
    return bindings;
  }

  /** The subscriptions whose binding matches the event's routing key, whatever their `from`. */
  matching(event: { account_id: string; routing_key: string }): Subscription[] {
    const root = this.#roots.get(event.account_id);
    if (!root) return [];
    const found: Subscription[] = [];
    collect(root, event.routing_key.split("."), 0, found);
    return found;
  }
}

function collect(node: Node, key: readonly string[], i: number, found: Subscription[]): void {
  for (const s of node.rest) found.push(s);
  const segment = key[i];
  if (segment === undefined) {
    for (const s of node.ending) found.push(s);
    return;
  }
  const exact = node.children.get(segment);
  if (exact) collect(exact, key, i + 1, found);
  // A routing key segment spelled `*` already went down the `*` branch above.
  const any = segment === "*" ? undefined : node.children.get("*");
  if (any) collect(any, key, i + 1, found);
}

/** Takes the subscription out of the tree and prunes the branches it leaves empty. */
function unlink(node: Node, segments: readonly string[], i: number, subscription: Subscription): boolean {
  const segment = segments[i];
  if (segment === "#") node.rest.delete(subscription);
  else if (segment === undefined) node.ending.delete(subscription);
  else {
    const child = node.children.get(segment);
    if (child && unlink(child, segments, i + 1, subscription)) node.children.delete(segment);
  }
  return node.children.size === 0 && node.ending.size === 0 && node.rest.size === 0;
}
