// Types of build-lib.mjs for the TypeScript tests (the build itself runs as plain Node ESM).

export declare const DEFAULT_OUT_ROOT: string;

export interface Metafile {
  outputs: Record<
    string,
    {
      imports?: { path: string; kind: string; external?: boolean }[];
      inputs?: Record<string, { bytesInOutput: number }>;
    }
  >;
}

export interface Manifest {
  name?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  [key: string]: unknown;
}

export interface Lockfile {
  packages?: Record<
    string,
    {
      dependencies?: Record<string, string>;
      devDependencies?: Record<string, string>;
      workspaces?: unknown;
      dev?: boolean;
      hasInstallScript?: boolean;
    }
  >;
}

export declare function packageNameOf(specifier: string): string | undefined;
export declare function externalPackages(metafile: Metafile): string[];
export declare function undeclaredPackages(
  externals: readonly string[],
  manifest: Manifest,
): string[];
export declare function withRuntimeDependencies(
  manifest: Manifest,
  runtimeDependencies: readonly string[],
  rootPackageJson: Manifest,
): Manifest & { dependencies: Record<string, string> };
export declare function lockfileProblems(lockfile: Lockfile, manifest: Manifest): string[];
export declare function prunedAllowScripts(
  allowScripts: Record<string, boolean> | undefined,
  lockfile: Lockfile,
): Record<string, boolean> | undefined;
export declare function installScriptProblems(
  lockfile: Lockfile,
  allowScripts?: Record<string, boolean>,
): string[];
export declare function expandFilePatterns(
  inputs: readonly unknown[],
  namedInputs: Record<string, readonly unknown[]>,
): string[];

export interface BuildResult {
  project: string;
  outDir: string;
  ms: number;
  bundleMs: number;
  bundleBytes: number;
  mapBytes: number;
  dependencies: string[];
  externals: string[];
  declaredOnly: string[];
  assets: string[];
}
