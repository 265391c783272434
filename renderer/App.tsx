// The console's routes: /login, and the console frame at / which sends signed-out visitors to
// /login. Hash routing, because the server serves only index.html's own path.
import { createHashRouter, Navigate, RouterProvider } from "react-router-dom";
import { RequireSession } from "./components/RequireSession.js";
import { Console } from "./views/Console.js";
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
  },
  { path: "*", element: <Navigate to="/" replace /> },
]);

export function App() {
  return <RouterProvider router={router} />;
}
