export interface ElectronBinary {
  path: string | null;
  /** Where it was looked for, for the skip message. */
  searched: string[];
}
export function findElectronBinary(root?: string, env?: NodeJS.ProcessEnv): ElectronBinary;
