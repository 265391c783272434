import type * as Werift from "werift";

declare const werift: typeof Werift;
export = werift;
