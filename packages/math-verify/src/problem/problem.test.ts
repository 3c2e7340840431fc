/**
 * What the problem statement decides (docs/grader-contract.md, "The problem statement"): the unit, the rounding,
 * the form (with `strictForm`) and the options of a multiple-choice question, on both entry points; and that
 * without a problem every verdict is today's.
 */
import { describe, expect, it } from 'vitest';
import { mathReward, verifyAnswer } from '../verify.js';
import { questionChoices } from './choices.js';
import { askedForm } from './form.js';
import { questionOf } from './index.js';
import { askedUnits, unitAfter } from './units.js';

const FEET = 'A rope is 20 yards long. How many feet long is the rope?';

describe('the unit asked', () => {
  it('reads "how many", "in <unit>", "number of degrees", \\text units and "what percent" from the question', () => {
    expect(Object.fromEntries(askedUnits(FEET))).toEqual({ length: 'foot' });
    expect(Object.fromEntries(askedUnits('What is the perimeter, in centimeters?'))).toEqual({ length: 'centimeter' });
    expect(Object.fromEntries(askedUnits('How many square inches are in the area of the square?'))).toEqual({ 'length^2': 'inch^2' });
    expect(Object.fromEntries(askedUnits('What is the number of degrees in the measure of angle $x$?'))).toEqual({ angle: 'degree' });
    expect(Object.fromEntries(askedUnits('What is the area in $\\text{cm}^2$?'))).toEqual({ 'length^2': 'centimeter^2' });
    expect(Object.fromEntries(askedUnits('How many minutes does the trip take, in dollars?'))).toEqual({ time: 'minute', money: 'dollar' });
    expect(Object.fromEntries(askedUnits('What percent of the students are girls?'))).toEqual({ percent: 'percent' });
  });

  it('asks for nothing where the question names no unit, or a kind in two units', () => {
    expect(askedUnits('How many ways can 5 people sit in a row?').size).toBe(0);
    expect(askedUnits('Find $x$ in terms of $\\pi$.').size).toBe(0);
    expect(askedUnits('A board is 3 feet long. How many inches is it, in feet?').size).toBe(0);
    expect(askedUnits('Convert the angle from degree measure into radian measure: $150^\\circ$').size).toBe(0);
  });

  it('refuses an answer in another unit of the kind asked, boxed or written after the box or the number', () => {
    const o = { problem: FEET, fallbacks: true };
    expect(mathReward('\\boxed{60\\text{ inches}}', '60', o)).toMatchObject({
      reward: 0,
      reason: 'unit: the problem asks for foot, the answer is in inch',
    });
    expect(mathReward('so it is \\boxed{60} inches.', '60', o).reward).toBe(0);
    expect(mathReward('The rope is 60 inches long.', '60', o).reward).toBe(0);
    expect(mathReward('\\boxed{60\\text{ yd}}', '60', o).reward).toBe(0);
    expect(verifyAnswer('60', '60 inches', { problem: FEET })).toMatchObject({ equal: false });
  });

  it('judges the same unit, no unit, another kind of unit and a unit the gold states as without the problem', () => {
    const o = { problem: FEET };
    for (const pred of ['\\boxed{60}', '\\boxed{60\\text{ feet}}', '\\boxed{60 ft}', '\\boxed{60} feet', '\\boxed{60} ways'])
      expect([pred, mathReward(pred, '60', o).reward]).toEqual([pred, 1]);
    expect(mathReward('\\boxed{61}', '60', o).reward).toBe(0);
    // Seconds are not a length: the question asks nothing of them (and the gold carries no unit).
    expect(mathReward('\\boxed{60\\text{ seconds}}', '60', o).reward).toBe(mathReward('\\boxed{60\\text{ seconds}}', '60').reward);
    // The gold states inches: its unit decides, not the question's.
    expect(mathReward('\\boxed{60\\text{ inches}}', '60\\text{ inches}', o).reward).toBe(1);
    // Without the problem, today's verdict: the gold has no unit, so any unit is accepted.
    expect(mathReward('\\boxed{60\\text{ inches}}', '60').reward).toBe(1);
  });

  it('reads "what percent" as percent written as is: 0.25 is not 25%', () => {
    const o = { problem: 'What percent of the class are girls?' };
    expect(mathReward('\\boxed{0.25}', '25\\%', o).reward).toBe(0);
    expect(mathReward('\\boxed{0.25}', '25\\%').reward).toBe(1);
    expect(mathReward('\\boxed{25}', '25\\%', o).reward).toBe(1);
    expect(mathReward('\\boxed{25\\%}', '25', o).reward).toBe(1);
  });

  it('reads the unit word right after an answer only when it is a known unit', () => {
    expect(unitAfter('x = 5 inches long', 5)).toBe('inch');
    expect(unitAfter('\\boxed{5}$ \\text{ cm}^2$', 8)).toBe('centimeter^2');
    expect(unitAfter('5 in total', 1)).toBeNull();
    expect(unitAfter('5 apples', 1)).toBeNull();
    // One letter: lower-case, at the end of a sentence, or inside \text{}.
    expect(unitAfter('\\boxed{5}$ m.', 9)).toBe('meter');
    expect(unitAfter('\\boxed{5}$ m is the side', 9)).toBeNull();
    expect(unitAfter('\\boxed{5}$ A.', 9)).toBeNull();
    expect(unitAfter('\\boxed{5}\\text{ m}', 9)).toBe('meter');
  });

  it('reads "in <unit>" before "of", "did", "between" ... (issue 42), and not "in terms of" or "in second place"', () => {
    const asked = (q: string): Record<string, string> => Object.fromEntries(askedUnits(q));
    expect(asked('What is the height in centimeters of the cylinder?')).toEqual({ length: 'centimeter' });
    expect(asked('What is the length in meters of the rope?')).toEqual({ length: 'meter' });
    expect(asked('What is the measure in degrees, of angle $ABC$?')).toEqual({ angle: 'degree' });
    expect(asked('What is the perimeter (in cm) of the square?')).toEqual({ length: 'centimeter' });
    expect(asked('What is the area in square feet of the room?')).toEqual({ 'length^2': 'foot^2' });
    expect(asked('How far in miles did she run?')).toEqual({ length: 'mile' });
    expect(asked('How long in minutes does the trip take?')).toEqual({ time: 'minute' });
    expect(asked('What is the distance in kilometers between A and B?')).toEqual({ length: 'kilometer' });
    expect(asked('What is the speed in miles per hour of the car?')).toEqual({ 'length/time': 'mile/hour' });
    expect(asked('How much in dollars does the book cost?')).toEqual({ money: 'dollar' });
    expect(asked('Express the area in terms of $\\pi$.')).toEqual({});
    expect(asked('She came in second place. How many points did she score?')).toEqual({});
    expect(asked('He paid in dollar bills. How much did he pay?')).toEqual({});
    expect(asked('The sketch shows it in minute detail. Find $x$.')).toEqual({});
    // Both units of a kind: "in feet and ... in inches" asks nothing.
    expect(asked('Lengths are measured in feet and the answer in inches?')).toEqual({});
  });
});

describe('the rounding asked', () => {
  it('feeds roundTo from "to the nearest hundredth", unless roundTo is set', () => {
    const problem = 'What is the circumference? Express your answer as a decimal to the nearest hundredth.';
    expect(mathReward('\\boxed{3.14}', '\\pi', { problem })).toMatchObject({ reward: 1 });
    expect(mathReward('\\boxed{3.14}', '\\pi').reward).toBe(0);
    expect(mathReward('\\boxed{3.1}', '\\pi', { problem }).reward).toBe(0);
    expect(mathReward('\\boxed{3.14}', '\\pi', { problem, roundTo: 4 }).reward).toBe(0);
    expect(verifyAnswer('\\pi', '3.14', { problem }).equal).toBe(true);
  });
});

describe('the form asked (strictForm)', () => {
  const fraction = 'What is the probability? Express your answer as a common fraction.';
  it('reads the form asked', () => {
    expect(askedForm(fraction)).toEqual({ exact: 'a common fraction', decimal: false, interval: false });
    expect(askedForm('Express your answer in simplest radical form.')?.exact).toBe('simplest radical form');
    expect(askedForm('Express your answer in terms of $\\pi$.')?.exact).toBe('terms of pi');
    expect(askedForm('Express your answer as a decimal.')).toEqual({ exact: null, decimal: true, interval: false });
    expect(askedForm('Express your answer in interval notation.')?.interval).toBe(true);
    expect(askedForm('What is $x$?')).toBeNull();
  });

  it('refuses an equal value in another form only with strictForm', () => {
    expect(mathReward('\\boxed{0.5}', '\\frac12', { problem: fraction, strictForm: true })).toMatchObject({
      reward: 0,
      reason: 'form: the problem asks for a common fraction, the answer has a decimal',
    });
    expect(mathReward('\\boxed{0.5}', '\\frac12', { problem: fraction }).reward).toBe(1);
    expect(mathReward('\\boxed{\\frac{2}{4}}', '\\frac12', { problem: fraction, strictForm: true }).reward).toBe(1);
    const decimal = { problem: 'Express your answer as a decimal.', strictForm: true };
    expect(mathReward('\\boxed{\\frac12}', '0.5', decimal).reward).toBe(0);
    expect(mathReward('\\boxed{0.5}', '0.5', decimal).reward).toBe(1);
    expect(mathReward('\\boxed{3}', '3', decimal).reward).toBe(1);
    const radical = { problem: 'Express your answer in simplest radical form.', strictForm: true };
    expect(mathReward('\\boxed{2\\sqrt2}', '2\\sqrt{2}', radical).reward).toBe(1);
    const interval = { problem: 'Give your answer in interval notation.', strictForm: true, strict: false };
    expect(mathReward('\\boxed{[-2, 7]}', '[-2, 7]', interval).reward).toBe(1);
    expect(mathReward('\\boxed{-2 \\le x \\le 7}', '[-2, 7]', interval).reward).toBe(0);
    expect(mathReward('\\boxed{-2 \\le x \\le 7}', '[-2, 7]', { ...interval, strictForm: false }).reward).toBe(1);
  });
});

describe('multiple choice', () => {
  const shapes =
    'Find the shape described by the equation\n\\[z = c.\\](A) Line\n(B) Circle\n(C) Plane\n(D) Sphere\n(E) Cylinder\n(F) Cone\n\nEnter the letter of the correct option.';
  const amc =
    'Which equation has the largest solution $x$?\n\n$\\textbf{(A)}\\ 3(1 + r)^x = 7\\qquad \\textbf{(B)}\\ 3(1 + r/10)^x = 7\\qquad \\textbf{(C)}\\ 3(1 + 2r)^x = 7$ $\\textbf{(D)}\\ 3(1 + \\sqrt {r})^x = 7\\qquad \\textbf{(E)}\\ 3(1 + 1/r)^x = 7$';

  it('reads the options: one per line, inline AMC style, `A.` lines; not `dot(A)` in a diagram', () => {
    expect(Object.fromEntries(questionChoices(shapes)!)).toEqual({
      A: 'Line',
      B: 'Circle',
      C: 'Plane',
      D: 'Sphere',
      E: 'Cylinder',
      F: 'Cone',
    });
    expect(Object.fromEntries(questionChoices(amc)!)).toEqual({
      A: '3(1 + r)^x = 7',
      B: '3(1 + r/10)^x = 7',
      C: '3(1 + 2r)^x = 7',
      D: '3(1 + \\sqrt {r})^x = 7',
      E: '3(1 + 1/r)^x = 7',
    });
    expect(Object.fromEntries(questionChoices('Pick one.\nA. 12\nB. 15\nC. 18')!)).toEqual({ A: '12', B: '15', C: '18' });
    expect(questionChoices('[asy]dot(A);dot(B);dot(C);[/asy] Find $P(A)$.')).toBeNull();
  });

  it("grades the option's text against a letter gold, and a letter against a text gold", () => {
    expect(mathReward('\\boxed{\\text{Plane}}', '\\text{(C)}', { problem: shapes })).toMatchObject({
      reward: 1,
      reason: 'choice (C) by its text: same_text',
    });
    expect(mathReward('\\boxed{\\text{Sphere}}', '\\text{(C)}', { problem: shapes }).reward).toBe(0);
    expect(mathReward('\\boxed{(C) Plane}', '\\text{(C)}', { problem: shapes }).reward).toBe(1);
    expect(mathReward('\\boxed{C}', '\\text{(C)}', { problem: shapes }).reward).toBe(1);
    expect(mathReward('\\boxed{D}', '\\text{(C)}', { problem: shapes }).reward).toBe(0);
    expect(mathReward('\\boxed{3(1 + r/10)^x = 7}', '\\text{(B)}', { problem: amc }).reward).toBe(1);
    expect(mathReward('\\boxed{3(1 + r)^x = 7}', '\\text{(B)}', { problem: amc }).reward).toBe(0);
    expect(verifyAnswer('Plane', 'C', { problem: shapes }).equal).toBe(true);
    expect(verifyAnswer('Plane', 'B', { problem: shapes }).equal).toBe(false);
    // Without the problem, a letter and a text never match.
    expect(mathReward('\\boxed{\\text{Plane}}', '\\text{(C)}').reward).toBe(0);
  });
});

describe('the problem statement as given', () => {
  it('reads the last user turn of a chat-templated prompt', () => {
    const chat =
      '<|im_start|>system\nAnswer in inches.<|im_end|>\n<|im_start|>user\nHow many feet is it?<|im_end|>\n<|im_start|>assistant\n';
    expect(questionOf(chat)).toBe('How many feet is it?');
    expect(questionOf('<|start_header_id|>user<|end_header_id|>\n\nHow many feet?<|eot_id|>')).toBe('How many feet?');
    expect(questionOf('Plain text.')).toBe('Plain text.');
    expect(mathReward('\\boxed{60 inches}', '60', { problem: chat }).reward).toBe(0);
  });

  it('is validated as a string or null', () => {
    expect(() => mathReward('\\boxed{1}', '1', { problem: 3 as unknown as string })).toThrow(/problem/);
    expect(mathReward('\\boxed{1}', '1', { problem: null }).reward).toBe(1);
  });
});

describe('answers over the grader’s bounds are flagged', () => {
  it('flags size and depth in the result, and nothing otherwise', () => {
    const deep = `\\boxed{${'('.repeat(200)}1${')'.repeat(200)}}`;
    expect(mathReward(deep, '1')).toMatchObject({ reward: 0, reason: 'pred_unparseable: nesting too deep', limit: 'depth' });
    expect(mathReward(`\\boxed{${'1+'.repeat(60_000)}1}`, '1')).toMatchObject({ reward: 0, reason: 'answer_too_large', limit: 'size' });
    expect(mathReward('\\boxed{1}', '1'.repeat(200_000))).toMatchObject({ reward: 0, reason: 'gold_too_large', limit: 'size' });
    expect(verifyAnswer('1', '1'.repeat(200_000))).toMatchObject({ equal: false, limit: 'size' });
    expect(verifyAnswer(`${'('.repeat(200)}1${')'.repeat(200)}`, '1')).toMatchObject({ equal: false, limit: 'depth' });
    expect(mathReward('\\boxed{1}', '1')).not.toHaveProperty('limit');
    expect(mathReward('\\boxed{2}', '1')).not.toHaveProperty('limit');
  });
});
