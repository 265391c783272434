// The console's routes once signed in: the console frame at / with one child route per entry of
// CONSOLE_VIEWS. Loaded on demand (App.tsx), so the sign-in screen ships without the views, the
// phone and the charts.
import { Navigate, Route, Routes } from "react-router-dom";
import { Console, CONSOLE_VIEWS } from "./Console.js";
import { TrainingReport } from "./TrainingReport.js";

export function ConsoleRoutes() {
  return (
    <Routes>
      <Route path="/" element={<Console />}>
        <Route index element={<Navigate to={`/${CONSOLE_VIEWS[0]?.path ?? ""}`} replace />} />
        {CONSOLE_VIEWS.map((view) => (
          <Route key={view.path} path={view.path} element={view.element} />
        ))}
        {/* A page of the Training view, reached from a run, not from the navigation. */}
        <Route path="training/runs/:runId/report" element={<TrainingReport />} />
      </Route>
      <Route path="*" element={<Navigate to="/" replace />} />
    </Routes>
  );
}
