// The few Node.js APIs the walkthrough uses, declared here so that it needs no @types/node beside the pinned tools.
declare module "node:fs" {
  export function readFileSync(path: string | URL, encoding: "utf8"): string;
}

declare const process: {
  readonly env: Readonly<Record<string, string | undefined>>;
  exitCode: number | undefined;
};
