// A channel command that cannot happen on the channel as it is now (not bridged, nothing to
// break, no such callflow ...): the API answers it 400 `invalid data` with this message.

export class ChannelCommandError extends Error {
  override name = "ChannelCommandError";

  constructor(
    /** The request field the refusal is about (`action`, `target`, `id` ...). */
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}
