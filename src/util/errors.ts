/** An error caused by the user's input: the CLI prints its one-line message (problem and fix)
 * and exits non-zero, without a stack trace. */
export class UserError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UserError';
  }
}
