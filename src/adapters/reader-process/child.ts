/**
 * The bounded reader's generic process entry (dev, tests, CLI): runBoundedReader forks
 * this file (through tsx when it is TypeScript) and names the worker module in its start
 * message; the module is imported here and must export `run(input, signal)`.
 */
import { isAbsolute } from 'node:path';
import { pathToFileURL } from 'node:url';
import { serveReaderChild } from './serve.js';

serveReaderChild((entry) => import(isAbsolute(entry) ? pathToFileURL(entry).href : entry));
