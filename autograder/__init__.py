"""The autograder: releases assignments and grades submissions in a sandbox."""
