// Vite's client types, so imports of CSS and assets and import.meta.env type-check in the renderer
// (tsconfig.web.json lists no ambient types of its own).
/// <reference types="vite/client" />
