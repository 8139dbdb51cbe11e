export function greet(greeting, who) {
  return `${greeting}, ${who}!`;
}
