import { expect, test } from '@jupyterlab/galata';

/**
 * A student's notebook shows Gradewright's Fetch, Check and Submit, and none of nbgrader's
 * instructor tools (its Validate button, its Create Assignment panel, its menu), which the
 * extension's package.json disables although nbgrader is installed.
 */
test('a notebook shows Fetch, Check and Submit and not nbgrader', async ({
  page
}) => {
  await page.notebook.createNew();
  const toolbar = page.locator('.jp-NotebookPanel-toolbar');
  for (const label of ['Fetch', 'Check', 'Submit']) {
    await expect(toolbar.getByText(label, { exact: true })).toBeVisible();
  }
  await expect(toolbar.getByText('Validate', { exact: true })).toHaveCount(0);
  await expect(page.locator('#nbgrader-create_assignemnt')).toHaveCount(0);
  await expect(page.getByText('Create Assignment')).toHaveCount(0);
  await expect(
    page.locator('.lm-MenuBar-itemLabel', { hasText: 'Nbgrader' })
  ).toHaveCount(0);
});
