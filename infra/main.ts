import { buildApp } from './app.js';

// The CDK entry (cdk.json "app"): build and synthesize into the CLI's output directory.
buildApp().app.synth();
