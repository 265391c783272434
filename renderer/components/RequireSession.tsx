// Guards the console's routes: without a signed-in session, the visitor goes to /login.
// Kept apart from the views so each later view is guarded the same way.
import type { ReactNode } from "react";
import { Navigate } from "react-router-dom";
import { useAppStore } from "../state/context.js";

export function RequireSession({ children }: { children: ReactNode }) {
  const signedIn = useAppStore((state) => state.session !== null);
  return signedIn ? children : <Navigate to="/login" replace />;
}
