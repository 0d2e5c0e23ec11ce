// sum returns the sum of its arguments.
export function sum(a, b) {
  return a - b;
}
