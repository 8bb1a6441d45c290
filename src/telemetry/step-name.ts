/** The Step dimension and `step` log key of a registry entry: its placeholder without `FunctionArn` (`WriteGenerationObject`). */
export function stepNameOf(placeholder: string): string {
  return placeholder.replace(/FunctionArn$/, '');
}
