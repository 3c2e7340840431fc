/** The credit metrics' JSON file: written all or nothing, read back through its schema. */
import { readFile } from 'node:fs/promises';
import { CoreError, formatZodIssues, writeFileAtomic } from '@rlvr/core';
import { ReportError } from '../errors.js';
import { CreditReportSchema, type CreditReport } from './schema.js';

/** Write `report` to `path` (a temporary file beside it, then a rename): a failure leaves no half-written file. */
export async function writeCreditJson(path: string, report: CreditReport): Promise<void> {
  await writeFileAtomic(path, `${JSON.stringify(report)}\n`);
}

/** Read and check a file `writeCreditJson` wrote; `ReportError('invalid_record')` names the field that is wrong. */
export async function readCreditJson(path: string): Promise<CreditReport> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (cause) {
    throw new CoreError('read_failed', `cannot read: ${(cause as Error).message}`, { file: path }, { cause });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new ReportError('invalid_record', `not JSON: ${(err as Error).message}`, { file: path }, { cause: err });
  }
  const r = CreditReportSchema.safeParse(value);
  if (!r.success) throw new ReportError('invalid_record', `not a credit report: ${formatZodIssues(r.error.issues)}`, { file: path });
  return r.data;
}
