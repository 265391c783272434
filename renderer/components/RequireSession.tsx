// Guards the console's routes: without a signed-in session, the visitor goes to /login, which
// sends them back to the route they were on once signed in (also after their token expired).
import type { ReactNode } from "react";
import { Navigate, useLocation } from "react-router-dom";
import { useAppStore } from "../state/context.js";

export interface ReturnTo {
  from: string;
}

export function RequireSession({ children }: { children: ReactNode }) {
  const signedIn = useAppStore((state) => state.session !== null);
  const location = useLocation();
  const state: ReturnTo = { from: location.pathname + location.search };
  return signedIn ? children : <Navigate to="/login" replace state={state} />;
}
