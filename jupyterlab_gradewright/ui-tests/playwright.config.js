/**
 * Configuration for Playwright using default from @jupyterlab/galata, driving Debian's chromium
 * (no browser download) against a JupyterLab on GRADEWRIGHT_UI_PORT (8888 by default) that loads the
 * extension as built in ../labextension (jupyter_server_test_config.py).
 */
const baseConfig = require('@jupyterlab/galata/lib/playwright-config');

const port = process.env.GRADEWRIGHT_UI_PORT || '8888';

module.exports = {
  ...baseConfig,
  use: {
    ...baseConfig.use,
    baseURL: `http://localhost:${port}`,
    // Playwright's video needs its own ffmpeg download: off (its traces and screenshots stay).
    video: 'off',
    launchOptions: {
      executablePath: process.env.CHROMIUM || '/usr/bin/chromium'
    }
  },
  webServer: {
    command: 'jlpm start',
    url: `http://localhost:${port}/lab`,
    timeout: 120 * 1000,
    reuseExistingServer: !process.env.CI
  }
};
