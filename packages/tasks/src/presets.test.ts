import { describe, expect, it } from 'vitest';
import { parseConfig } from '@rlvr/core';
import { DatasetFormatSchema, resolveMapping } from './datasets.js';
import { DATASET_PRESETS, guessPreset, PRESET_ALIASES, PresetNameSchema, presetLabel, resolvePreset } from './presets.js';

const LIST =
  'deepmath, math500, aime (or aime24), amc (or amc23), college_math (or college), minerva_math (or minerva), olympiadbench (or olympiad), gsm8k, synthetic';

describe('one set of preset names', () => {
  it('every alias reads as its preset, every preset as itself; nothing else', () => {
    for (const [alias, preset] of Object.entries(PRESET_ALIASES)) {
      expect(resolvePreset(alias)).toBe(preset);
      expect(PresetNameSchema.parse(alias)).toBe(preset);
      expect(resolveMapping(alias as never)).toBe(DATASET_PRESETS[preset]);
    }
    for (const p of Object.keys(DATASET_PRESETS)) expect(resolvePreset(p)).toBe(p);
    expect(resolvePreset('toString')).toBeUndefined();
    expect(resolvePreset('aime25')).toBeUndefined();
  });

  it('an unknown name, or a bad mapping, fails in one message that lists the names or names the field', () => {
    expect(() => parseConfig(DatasetFormatSchema, 'aime25', 'data.format')).toThrow(
      `(root): unknown dataset preset "aime25": the presets are ${LIST}`,
    );
    expect(() => parseConfig(DatasetFormatSchema, { question: 'problem' }, 'data.format')).toThrow(/not a field mapping: answer: /);
    expect(() => parseConfig(DatasetFormatSchema, 7, 'data.format')).toThrow(`must be a preset name (${LIST}) or a field mapping`);
    expect(DatasetFormatSchema.parse('olympiad')).toBe('olympiadbench');
    expect(DatasetFormatSchema.parse({ question: 'q', answer: 'a' })).toEqual({ question: 'q', answer: 'a', answerFormat: 'value' });
  });

  it('guesses from file names; tables use the benchmark alias', () => {
    expect(guessPreset('data/long-chain.jsonl')).toBe('synthetic');
    expect(guessPreset('AIME24/test.jsonl')).toBe('aime');
    expect(presetLabel('aime')).toBe('aime24');
    expect(presetLabel('gsm8k')).toBe('gsm8k');
  });
});
