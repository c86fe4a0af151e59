;;; skills-test.el --- The skills list, a skill's files read-only, its path copied  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; FastMCP's skills fixture (fixtures/python/fastmcp_skills_server.py on fixtures/skills/, run by
;; MCP_PYTHON from scripts/install-peers.sh) twice behind the real sidecar: `docs' and `more'
;; serve the same skills.  `mcp-sidecar-skills' lists each with its server, both of a name,
;; each marked; RET opens SKILL.md and `f' another file of the manifest, read-only, the header
;; line saying it was verified; `w' copies the skill's path.

;;; Code:

(require 'mcp-sidecar-test-helpers)
(require 'mcp-sidecar-tasks)

(defconst skills-test-repo
  (expand-file-name "../../../" (file-name-directory (or load-file-name buffer-file-name)))
  "The repository.")

(defun skills-test-server (name)
  "The skills fixture's definition, named NAME."
  (let ((python (getenv "MCP_PYTHON")))
    (unless (and python (file-executable-p python))
      (error "MCP_PYTHON must name the peers venv python (scripts/install-peers.sh)"))
    (list name :command python
          :args (list (expand-file-name "fixtures/python/fastmcp_skills_server.py"
                                        skills-test-repo)))))

(defun skills-test-file (path)
  "The bytes of fixtures/skills/PATH, as a string."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (insert-file-contents-literally (expand-file-name (concat "fixtures/skills/" path)
                                                      skills-test-repo))
    (buffer-string)))

(defun skills-test-goto (name server)
  "Put point on the line of the skill NAME of SERVER in the current skills buffer."
  (goto-char (point-min))
  (while (let ((row (tabulated-list-get-id)))
           (not (and row (equal (plist-get row :name) name)
                     (equal (plist-get row :server) server))))
    (when (eobp)
      (error "No skill %s of %s listed" name server))
    (forward-line 1)))

(defun skills-test-list ()
  "Open the skills list, select its window; return its buffer."
  (mcp-sidecar-skills)
  (let ((buffer (mst-wait (lambda () (cl-find-if (lambda (b) (with-current-buffer b
                                                               (derived-mode-p 'mcp-sidecar-skills-mode)))
                                                 (buffer-list)))
                          "the skills buffer")))
    (select-window (get-buffer-window buffer))
    buffer))

(ert-deftest skills-test-list-open-and-copy ()
  "Every skill with its server, clashes marked; files open verified; w copies the path."
  (mst-start (list (skills-test-server "docs") (skills-test-server "more")))
  (with-current-buffer (skills-test-list)
    (let ((text (mst-text (current-buffer))))
      (should (string-search "⚠ same name as more skill://release-notes/SKILL.md" text))
      (should (string-search "⚠ same name as docs skill://release-notes/SKILL.md" text))
      (should (string-search "Write release notes for a version" text)))
    (skills-test-goto "release-notes" "docs")
    (should (string-search "release-notes ⚠" (buffer-substring (line-beginning-position)
                                                               (line-end-position))))
    (mst-press "RET"))
  (let ((buffer (mst-buffer "*mcp skill: docs skill://release-notes/SKILL.md*")))
    (with-current-buffer buffer
      (should (equal (decode-coding-string (skills-test-file "release-notes/SKILL.md") 'utf-8)
                     (mst-text buffer)))
      (should buffer-read-only)
      (should mcp-sidecar-skill-file-mode)
      (let ((hex (secure-hash 'sha256 (skills-test-file "release-notes/SKILL.md"))))
        (should (equal (concat "sha256:" hex) (plist-get mcp-sidecar--skill :digest)))
        (should (string-search (concat "docs · verified sha256:" (substring hex 0 8) "…"
                                       (substring hex -7))
                               (format "%s" header-line-format))))
      ;; w copies the skill's path.
      (select-window (get-buffer-window buffer))
      (mst-press "w")
      (should (equal "skill://release-notes/SKILL.md" (current-kill 0)))))
  ;; f opens another file of the manifest.
  (with-current-buffer (skills-test-list)
    (skills-test-goto "release-notes" "more")
    (mst-press "f" '("templates") "TAB RET"))
  (let ((buffer (mst-buffer "*mcp skill: more skill://release-notes/templates/notes.md*")))
    (should (equal (skills-test-file "release-notes/templates/notes.md") (mst-text buffer)))
    (should (with-current-buffer buffer (plist-get mcp-sidecar--skill :verified))))
  ;; w on a line of the list copies that skill's path.
  (with-current-buffer (skills-test-list)
    (skills-test-goto "review-checklist" "docs")
    (mst-press "w")
    (should (equal "skill://review-checklist/SKILL.md" (current-kill 0))))
  (mst-back-to-workspace))

;;; skills-test.el ends here
