export interface CorpusRow {
  source: string;
  gold: string;
  pred: string;
  expected: boolean;
  note: string;
}
export interface Profile {
  call: 'reward' | 'answer';
  options: Record<string, unknown>;
  wrapGold?: boolean;
}
export interface Api {
  mathReward(completion: string, gold: string, options?: any): { reward: 0 | 1; extracted: string | null; reason: string };
  verifyAnswer(gold: string, pred: string, options?: any): { equal: boolean; reason: string; gold: string | null; pred: string | null };
}
export interface RowResult {
  got: boolean;
  reason: string;
  gold: string | null;
  pred: string | null;
}
export interface TableRow {
  source: string;
  cases: number;
  agree: number;
}
export interface Miss extends RowResult {
  index: number;
  source: string;
  expected: boolean;
  goldRaw: string;
  predRaw: string;
}
export function loadCorpus(path: string): CorpusRow[];
export function sourceName(source: string): string;
export function profileFor(row: CorpusRow): Profile;
export function runRow(api: Api, row: CorpusRow, profile?: Profile): RowResult;
export function agreementTable(api: Api, rows: CorpusRow[]): { table: TableRow[]; total: TableRow; misses: Miss[] };
export const UNIFORM_OPTIONS: Record<string, unknown>;
export function uniformAgreement(
  api: Api,
  rows: CorpusRow[],
): { agree: number; cases: number; misses: { index: number; source: string; expected: boolean }[] };
