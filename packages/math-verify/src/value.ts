/**
 * The values the evaluator computes, and their arithmetic: exact (a bigint rational) where both operands are exact
 * and the result stays within `MAX_BITS`, a complex double always.
 */
import { type Complex, type Rational, c, cAdd, cDiv, cMul, rAdd, rDiv, rMul, rNeg, rToNumber } from './numeric.js';

/** What an evaluation carries (here, below evaluate.ts and bigop.ts, so that neither imports the other). */
export interface EvalContext {
  env: ReadonlyMap<string, Complex>;
  /** Read `x%` as x/100 (true) or as x (false). */
  percentAsFraction: boolean;
  /** Steps left; every node evaluated costs one. */
  budget: { steps: number };
}

export class NotEvaluableError extends Error {}

/** A computed value: `ex` is the exact rational when known; `dec` marks values built from decimal literals. */
export interface Value {
  ex: Rational | null;
  v: Complex;
  dec: boolean;
}

export function exact(r: Rational | null, dec: boolean): Value {
  if (r === null) throw new NotEvaluableError('exact arithmetic overflow');
  return { ex: r, v: c(rToNumber(r)), dec };
}

export function approx(v: Complex, dec: boolean): Value {
  return { ex: null, v, dec };
}

export const V_ZERO: Value = { ex: { n: 0n, d: 1n }, v: c(0), dec: false };
export const V_ONE: Value = { ex: { n: 1n, d: 1n }, v: c(1), dec: false };

/** An exact integer value. */
export const vInt = (k: bigint): Value => ({ ex: { n: k, d: 1n }, v: c(Number(k)), dec: false });

/** `a + b`, exact when both are and the result fits; else in floating point. */
export function vAdd(a: Value, b: Value): Value {
  const ex = a.ex && b.ex ? rAdd(a.ex, b.ex) : null;
  return { ex, v: ex ? c(rToNumber(ex)) : cAdd(a.v, b.v), dec: a.dec || b.dec };
}

export function vNeg(a: Value): Value {
  return { ex: a.ex ? rNeg(a.ex) : null, v: c(-a.v.re, -a.v.im), dec: a.dec };
}

export function vSub(a: Value, b: Value): Value {
  return vAdd(a, vNeg(b));
}

export function vMul(a: Value, b: Value): Value {
  const ex = a.ex && b.ex ? rMul(a.ex, b.ex) : null;
  return { ex, v: ex ? c(rToNumber(ex)) : cMul(a.v, b.v), dec: a.dec || b.dec };
}

export function vDiv(a: Value, b: Value): Value {
  const ex = a.ex && b.ex ? rDiv(a.ex, b.ex) : null;
  return { ex, v: ex ? c(rToNumber(ex)) : cDiv(a.v, b.v), dec: a.dec || b.dec };
}
