import { CoreError } from './errors.js';

/**
 * A registry of named implementations (estimators, weightings, backends...).
 * Registering a taken name with a different implementation throws; registering
 * the same object twice is harmless. Looking up an unknown name throws and lists
 * the known ones.
 */
export class Registry<T extends { readonly name: string }> {
  readonly kind: string;
  readonly #items = new Map<string, T>();

  /** `kind` names what is registered, for messages (`advantage estimator`). */
  constructor(kind: string) {
    this.kind = kind;
  }

  register(item: T): T {
    const name = item.name;
    if (typeof name !== 'string' || name.length === 0)
      throw new CoreError('invalid_config', `a ${this.kind} needs a non-empty string name`);
    const existing = this.#items.get(name);
    if (existing !== undefined && existing !== item) {
      throw new CoreError('name_taken', `${this.kind} "${name}" is already registered with another implementation`, { field: name });
    }
    this.#items.set(name, item);
    return item;
  }

  has(name: string): boolean {
    return this.#items.has(name);
  }

  get(name: string): T {
    const item = this.#items.get(name);
    if (item === undefined) {
      throw new CoreError('unknown_name', `unknown ${this.kind} "${name}"; known: ${this.names().join(', ') || '(none)'}`, { field: name });
    }
    return item;
  }

  /** Registered names, sorted. */
  names(): string[] {
    return [...this.#items.keys()].sort();
  }
}
