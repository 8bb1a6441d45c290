/** The Step dimension and `step` log key of a registry entry: its placeholder without `FunctionArn` (`GenerationWriteObject`). */
export function stepNameOf(placeholder: string): string {
  return placeholder.replace(/FunctionArn$/, '');
}
