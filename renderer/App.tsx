// The console's routes: /login, and the console frame at / with one child route per entry of
// CONSOLE_VIEWS (views/Console.tsx); signed-out visitors go to /login and come back to where they
// were. Hash routing, because the server serves only index.html's own path.
import { createHashRouter, Navigate, RouterProvider } from "react-router-dom";
import { RequireSession } from "./components/RequireSession.js";
import { Console, CONSOLE_VIEWS } from "./views/Console.js";
import { Login } from "./views/Login.js";

const router = createHashRouter([
  { path: "/login", element: <Login /> },
  {
    path: "/",
    element: (
      <RequireSession>
        <Console />
      </RequireSession>
    ),
    children: [
      { index: true, element: <Navigate to={`/${CONSOLE_VIEWS[0]?.path ?? ""}`} replace /> },
      ...CONSOLE_VIEWS.map((view) => ({ path: view.path, element: view.element })),
    ],
  },
  { path: "*", element: <Navigate to="/" replace /> },
]);

export function App() {
  return <RouterProvider router={router} />;
}
