// Where the engine's events go: the bus of events/, seen from below as anything that publishes,
// so calls/ does not import the layer above it (architecture.md: imports run top to bottom).

/** A call or notification event, shaped as the bus takes it (it adds `seq` and `at`). */
export interface CallEvent {
  account_id: string;
  routing_key: string;
  name: string;
  data: Record<string, unknown>;
}

export interface EventSink {
  publish(event: CallEvent): unknown;
}
