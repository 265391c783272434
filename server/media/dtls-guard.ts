// werift's DTLS client fails its whole handshake on a second HelloVerifyRequest (its flight 3
// throws when flight 3 has already started). Its DTLS server answers every cookie-less
// ClientHello with one, and its client repeats the ClientHello if nothing came back within
// 500 ms. So a server slower than that (a worker thread or a peer not scheduled for half a second
// on a loaded machine) answers twice, and the leg closes with "dtls failed" 1-3 s into the call,
// which calls/ reports as MEDIA_TIMEOUT (docs/design-notes.md, "Media legs under load").
// RFC 6347 §4.2.1 makes the cookie exchange idempotent: the answer to a retransmitted ClientHello
// carries nothing the first did not, and the client's ClientHello with the cookie has its own
// retransmission. So a HelloVerifyRequest reaches the client only while it still waits for one.

import type { RTCDtlsTransport } from "werift";

type DtlsSocket = NonNullable<RTCDtlsTransport["dtls"]>;

/** RFC 6347 §4.3.2: HandshakeType hello_verify_request. */
const HELLO_VERIFY_REQUEST = 3;
/** werift's client flight that sends the first ClientHello and waits for the cookie. */
const AWAITING_COOKIE = 1;

const guarded = new WeakSet<RTCDtlsTransport>();

/** Drops the HelloVerifyRequests `transport`'s DTLS client gets after the first; idempotent. */
export function guardHelloVerify(transport: RTCDtlsTransport): void {
  if (guarded.has(transport)) return;
  guarded.add(transport);
  if (transport.dtls) filterSocket(transport.dtls);
  // werift makes the DTLS socket as the transport starts connecting, in the same turn, and sends
  // the first ClientHello 100 ms later: a microtask after "connecting" comes before it.
  transport.onStateChange.subscribe((state) => {
    if (state === "connecting") queueMicrotask(() => transport.dtls && filterSocket(transport.dtls));
  });
}

const filtered = new WeakSet<DtlsSocket>();

function filterSocket(socket: DtlsSocket): void {
  if (filtered.has(socket)) return;
  filtered.add(socket);
  const handle = socket.onHandleHandshakes;
  socket.onHandleHandshakes = (assembled) => {
    const wanted = assembled.filter((h) => h.msg_type !== HELLO_VERIFY_REQUEST || socket.dtls.flight === AWAITING_COOKIE);
    return wanted.length === 0 ? Promise.resolve() : handle.call(socket, wanted);
  };
}
