/** bin/bundle-freshness.js: the CLI bundle is built from the sources as they are now (and CUTPOINT_CLI_FROM_SOURCE is not 1). */
export declare function bundleIsFresh(root: URL): boolean;
