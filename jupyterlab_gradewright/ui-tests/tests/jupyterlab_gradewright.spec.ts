import { expect, test } from '@jupyterlab/galata';

/**
 * A student's notebook shows Gradewright's Fetch, Check and Submit, and none of nbgrader's
 * instructor tools (its Validate button, its Create Assignment panel, its menu), which the
 * extension's package.json disables although nbgrader is installed.
 *
 * The panel's side of Fetch and Submit, against the server side's answers (handlers.py; its own
 * words are tested in tests/test_jupyterlab_student.py): Fetch offers each assignment by its title
 * and due time and names a notebook there already as the student's folder has it; Submit shows
 * the server's warnings and hands in only once confirmed; the panel shows each score as the
 * server side rounded it.
 */
test('a notebook shows Fetch, Check and Submit, not nbgrader; Fetch, Submit and the panel as the site words them', async ({
  page
}) => {
  const label = 'Attention (due 3 Dec 2026, 20:00 UTC)';
  const late =
    'The due time (3 Dec 2026, 20:00 UTC) has passed: a hand-in now is late and loses 10% of its score.';
  await page.route(/\/gradewright\/assignments(\?|$)/, route =>
    route.fulfill({
      json: { assignments: [{ name: 'week-1', title: 'Attention', label }] }
    })
  );
  await page.route(/\/gradewright\/fetch(\?|$)/, route =>
    route.fulfill({
      status: 409,
      json: {
        error:
          'week-1/week-1.ipynb exists already (your work?): kept; pass overwrite=True to replace it'
      }
    })
  );
  const submitted: any[] = [];
  await page.route(/\/gradewright\/submit(\?|$)/, route => {
    const asked = route.request().postDataJSON();
    submitted.push(asked);
    if (!asked.anyway) {
      return route.fulfill({
        status: 428,
        json: { error: `nothing was handed in: ${late}`, warnings: [late] }
      });
    }
    return route.fulfill({
      status: 201,
      json: {
        id: 7,
        assignment: 'week-1',
        state: 'graded',
        page_url: 'http://site.example/submissions/7/',
        score_lines: ['Score: 0.38 / 1'],
        report: {
          questions: [
            {
              id: 'q1',
              score: 0.375,
              max_score: 1,
              shown: '0.38 / 1',
              status: 'partial'
            }
          ]
        }
      }
    });
  });
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
  await toolbar.getByText('Fetch', { exact: true }).click();
  const dialog = page.locator('.jp-Dialog');
  await dialog.locator('select').selectOption({ label });
  await dialog.getByRole('button', { name: 'OK' }).click();
  await expect(
    page.getByText(
      'week-1/week-1.ipynb exists already (your work?): kept. Replace it'
    )
  ).toBeVisible();
  await page.getByRole('button', { name: 'Keep mine' }).click();

  await toolbar.getByText('Submit', { exact: true }).click();
  await expect(page.locator('.jp-gradewright-warnings')).toHaveText(late);
  await page.getByRole('button', { name: 'Do not hand in' }).click();
  expect(submitted.map(asked => asked.anyway)).toEqual([undefined]);
  await toolbar.getByText('Submit', { exact: true }).click();
  await page.getByRole('button', { name: 'Hand in anyway' }).click();
  const feedback = page.locator('.jp-gradewright-feedback');
  await expect(feedback.locator('td', { hasText: '0.38 / 1' })).toBeVisible();
  expect(submitted.map(asked => asked.anyway)).toEqual([
    undefined,
    undefined,
    true
  ]);
});
