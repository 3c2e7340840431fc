/** The repository's published packages, read from their package.json files (no hand-written list to fall behind). */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export interface PackageInfo {
  /** its folder, relative to the repository root: packages/NAME, or methods/NAME for a credit-assignment method */
  dir: string;
  name: string;
  version: string;
  /** bin name -> path relative to the package */
  bin: Record<string, string>;
  /** export subpaths other than ./package.json, e.g. '.', './http' */
  subpaths: string[];
}

// the folders the root package.json names as workspaces of published packages
const FOLDERS = ['packages', 'methods'];

export const PACKAGES: PackageInfo[] = FOLDERS.flatMap((folder) => readdirSync(join(ROOT, folder)).map((name) => `${folder}/${name}`)).map(
  (dir) => {
    const pkg = JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as {
      name: string;
      version: string;
      bin?: Record<string, string>;
      exports: Record<string, unknown>;
    };
    return {
      dir,
      name: pkg.name,
      version: pkg.version,
      bin: pkg.bin ?? {},
      subpaths: Object.keys(pkg.exports).filter((k) => k !== './package.json'),
    };
  },
);

export const BINS = PACKAGES.flatMap((p) => Object.entries(p.bin).map(([name, path]) => ({ pkg: p, name, path })));
