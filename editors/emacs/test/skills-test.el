;;; skills-test.el --- The skills list, a skill's files read-only, its path copied  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; The demo server twice behind the real sidecar (`demo' and `twin' serve the same two skills,
;; fixtures/skills-demo/), and the hostile skills server (fixtures/bad/hostile_tasks.py, stdlib
;; Python).  `mcp-sidecar-skills' lists each skill with its server, both of a name, each marked;
;; RET opens SKILL.md and `f' another file of the manifest, read-only, the header line saying it
;; was verified; `w' copies the skill's path; a skill that cannot be loaded says why, and a file
;; whose bytes are not its digest is refused.

;;; Code:

(require 'mcp-sidecar-test-helpers)
(require 'mcp-sidecar-tasks)

(defconst skills-test-repo
  (expand-file-name "../../../" (file-name-directory (or load-file-name buffer-file-name)))
  "The repository.")

(defconst skills-test-servers
  (list (mst-demo) (mst-demo "twin")
        (list "hostile" :command (or (executable-find "python3") "python3")
              :args (list (expand-file-name "fixtures/bad/hostile_tasks.py" skills-test-repo))))
  "The servers: the demo twice, the hostile skills server.")

(defun skills-test-file (path)
  "The bytes of fixtures/skills-demo/PATH, as a string."
  (with-temp-buffer
    (set-buffer-multibyte nil)
    (insert-file-contents-literally (expand-file-name (concat "fixtures/skills-demo/" path)
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
  (mst-start skills-test-servers)
  (with-current-buffer (skills-test-list)
    (let ((text (mst-text (current-buffer))))
      (should (string-search "⚠ same name as twin skill://flight-report/SKILL.md" text))
      (should (string-search "⚠ same name as demo skill://flight-report/SKILL.md" text))
      (should (string-search "Write a short report comparing flights" text)))
    (skills-test-goto "flight-report" "demo")
    (should (string-search "flight-report ⚠" (buffer-substring (line-beginning-position)
                                                               (line-end-position))))
    (mst-press "RET"))
  (let ((buffer (mst-buffer "*mcp skill: demo skill://flight-report/SKILL.md*")))
    (with-current-buffer buffer
      (should (equal (decode-coding-string (skills-test-file "flight-report/SKILL.md") 'utf-8)
                     (mst-text buffer)))
      (should buffer-read-only)
      (should mcp-sidecar-skill-file-mode)
      (let ((hex (secure-hash 'sha256 (skills-test-file "flight-report/SKILL.md"))))
        (should (equal (concat "sha256:" hex) (plist-get mcp-sidecar--skill :digest)))
        (should (string-search (concat "demo · verified sha256:" (substring hex 0 8) "…"
                                       (substring hex -7))
                               (format "%s" header-line-format))))
      ;; w copies the skill's path.
      (select-window (get-buffer-window buffer))
      (mst-press "w")
      (should (equal "skill://flight-report/SKILL.md" (current-kill 0)))))
  ;; f opens another file of the manifest.
  (with-current-buffer (skills-test-list)
    (skills-test-goto "flight-report" "twin")
    (mst-press "f" '("templates") "TAB RET"))
  (let ((buffer (mst-buffer "*mcp skill: twin skill://flight-report/templates/report.md*")))
    (should (equal (decode-coding-string (skills-test-file "flight-report/templates/report.md")
                                         'utf-8)
                   (mst-text buffer)))
    (should (with-current-buffer buffer (plist-get mcp-sidecar--skill :verified))))
  ;; w on a line of the list copies that skill's path.
  (with-current-buffer (skills-test-list)
    (skills-test-goto "trip-checklist" "demo")
    (mst-press "w")
    (should (equal "skill://trip-checklist/SKILL.md" (current-kill 0))))
  (mst-back-to-workspace))

(ert-deftest skills-test-what-cannot-be-loaded-or-verified ()
  "A skill that cannot be loaded says why; a file that fails its digest is refused."
  (mst-start skills-test-servers)
  (with-current-buffer (skills-test-list)
    (skills-test-goto "huge-manifest" "hostile")
    (should (string-search "✗ cannot be loaded: " (buffer-substring (line-beginning-position)
                                                                     (line-end-position))))
    (should-error (mcp-sidecar-skills-open) :type 'user-error)
    (skills-test-goto "dup" "hostile")
    (should (string-search "⚠ same name as hostile skill://b/dup/SKILL.md"
                           (buffer-substring (line-beginning-position) (line-end-position))))
    (skills-test-goto "bad-digest" "hostile")
    (mst-press "RET"))
  (mst-wait (lambda () (string-search
                        "mcp-sidecar: hostile: skill://bad-digest/SKILL.md cannot be opened: "
                        (mst-messages)))
            "the refusal" 30)
  (should (string-search "[refused]" (mst-messages)))
  (should-not (get-buffer "*mcp skill: hostile skill://bad-digest/SKILL.md*"))
  (mst-back-to-workspace))

;;; skills-test.el ends here
