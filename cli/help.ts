/** The "Examples:" section of a command's help (`addHelpText('after', …)`): each line a command as typed, `# …` a comment. */
export function examples(...lines: string[]): string {
  return `\nExamples:\n${lines.map((line) => `  $ ${line}`).join('\n')}\n`
}
