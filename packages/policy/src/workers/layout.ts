import { parameterShapes, type ModelConfig } from '../config.js';

/** Where one parameter lives in a flat float32 buffer. */
export interface ParamSlot {
  name: string;
  shape: number[];
  /** first float (not byte) of the parameter */
  offset: number;
  size: number;
}

/** Every parameter of a model config, in `Qwen3Model.params` order, packed back to back. */
export interface ParamLayout {
  slots: ParamSlot[];
  /** floats in all */
  total: number;
}

/** The fixed layout of the parameter and gradient buffers: name -> offset / shape, in checkpoint order. */
export function paramLayout(config: ModelConfig): ParamLayout {
  const slots: ParamSlot[] = [];
  let offset = 0;
  for (const [name, shape] of parameterShapes(config)) {
    const size = shape.reduce((a, b) => a * b, 1);
    slots.push({ name, shape, offset, size });
    offset += size;
  }
  return { slots, total: offset };
}
