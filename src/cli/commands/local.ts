import { localDown, localStatus, localUp } from '../../local/runtime.js';
import { progress, UsageError } from '../io.js';

export const localHelp = `cutpoint local up|down|status
  up      start DynamoDB Local and the S3 emulator in the background (data under .cutpoint/local)
  down    stop them
  status  show whether they run and where`;

export async function localCommand(args: string[]): Promise<unknown> {
  switch (args[0]) {
    case 'up':
      progress('starting the local runtime (DynamoDB Local + S3 emulator) …');
      return localUp();
    case 'down':
      return localDown();
    case 'status':
      return localStatus();
    default:
      throw new UsageError(`unknown local subcommand ${JSON.stringify(args[0] ?? '')}\n${localHelp}`);
  }
}
