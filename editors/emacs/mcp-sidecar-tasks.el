;;; mcp-sidecar-tasks.el --- MCP tasks and skills  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;; This file is not part of GNU Emacs.

;;; Commentary:

;; `mcp-sidecar-tasks' lists the tasks of the project's sidecar (a tool call a server runs as a
;; task: Tasks extension), running ones first: `c' cancels the one on the line (the server gets
;; tasks/cancel), RET shows the result of one that ended.  `mcp-sidecar-skills' lists the skills
;; of the running servers (Skills extension), two skills of one name both listed and marked:
;; RET opens its SKILL.md, `f' another file of its manifest, read-only, the header line saying
;; where it came from and whether the sidecar verified it; `w' copies the skill's path.  Text
;; the servers chose is inserted as text, never evaluated or used as a format string.

;;; Code:

(require 'cl-lib)
(require 'parse-time)
(require 'tabulated-list)
(require 'mcp-sidecar-client)
(require 'mcp-sidecar-commands)
(require 'mcp-sidecar-resources)

;;; Tasks

(defvar-local mcp-sidecar--tasks-root nil
  "The project root of a tasks or skills buffer.")

(defun mcp-sidecar--time (text)
  "The RFC 3339 time TEXT as the local time of day, with the date on another day."
  (let ((time (and (stringp text) (ignore-errors (parse-iso8601-time-string text)))))
    (cond ((null time) (or (mcp-sidecar--text text) "?"))
          ((equal (format-time-string "%F" time) (format-time-string "%F"))
           (format-time-string "%T" time))
          (t (format-time-string "%F %T" time)))))

(defun mcp-sidecar--list-tasks (conn)
  "The tasks of CONN, running ones first (kept for the mode line)."
  (let ((rows (cl-remove-if-not (lambda (row) (stringp (plist-get row :server)))
                                (append (mcp-sidecar--exec-sync conn 'list-tasks) nil))))
    (dolist (row rows)
      (let* ((key (mcp-sidecar--task-key (plist-get row :server) (plist-get row :taskId)))
             (known (gethash key (mcp-sidecar--tasks conn))))
        ;; A task that ended never runs again.
        (unless (and known (not (mcp-sidecar--task-running-p known))
                     (mcp-sidecar--task-running-p row))
          (puthash key row (mcp-sidecar--tasks conn)))))
    (force-mode-line-update t)
    (append (cl-remove-if-not #'mcp-sidecar--task-running-p rows)
            (cl-remove-if #'mcp-sidecar--task-running-p rows))))

(defun mcp-sidecar--task-entries (rows)
  "The task ROWS as `tabulated-list-entries'."
  (mapcar (lambda (row)
            (list row
                  (vector (format "%s" (plist-get row :status))
                          (plist-get row :server)
                          (format "%s" (plist-get row :tool))
                          (mcp-sidecar--time (plist-get row :startedAt))
                          (if (mcp-sidecar--task-running-p row)
                              ""
                            (mcp-sidecar--time (plist-get row :updatedAt)))
                          (string-join (delq nil (list (mcp-sidecar--text
                                                        (plist-get row :statusMessage))
                                                       (mcp-sidecar--text (plist-get row :error))))
                                       " · "))))
          rows))

(defun mcp-sidecar--tasks-refresh ()
  "Read the tasks again (`tabulated-list-revert-hook')."
  (setq tabulated-list-entries
        (mcp-sidecar--task-entries
         (mcp-sidecar--list-tasks (mcp-sidecar--ensure mcp-sidecar--tasks-root)))))

(defun mcp-sidecar--task-at-point ()
  "The task on this line of the tasks buffer."
  (or (tabulated-list-get-id) (user-error "No task on this line")))

(defun mcp-sidecar--show-task (task)
  "Show TASK, its state and its result, in a read-only buffer."
  (let ((result (plist-get task :result)))
    (mcp-sidecar--show-buffer
     (format "*mcp task: %s/%s*" (plist-get task :server) (plist-get task :taskId))
     (lambda ()
       (insert "# " (plist-get task :server) " › " (format "%s" (plist-get task :tool)) "\n\n"
               "Task " (format "%s" (plist-get task :taskId)) ": "
               (format "%s" (plist-get task :status))
               (let ((message (mcp-sidecar--text (plist-get task :statusMessage))))
                 (if message (concat " (" message ")") ""))
               "\nStarted " (mcp-sidecar--time (plist-get task :startedAt))
               (if (mcp-sidecar--task-running-p task) ", updated " ", ended ")
               (mcp-sidecar--time (plist-get task :updatedAt)) ".\n")
       (when (mcp-sidecar--text (plist-get task :error))
         (insert "Error: " (plist-get task :error) "\n"))
       (insert "\n")
       (if (not result)
           (insert "No result.\n")
         (mcp-sidecar--insert-tool-result result))))))

(defun mcp-sidecar-tasks-show ()
  "Show the result of the task on this line."
  (interactive)
  (let ((task (mcp-sidecar--task-at-point)))
    (if (mcp-sidecar--task-running-p task)
        (mcp-sidecar--say "%s › %s is still running (c cancels it)"
                          (plist-get task :server) (format "%s" (plist-get task :tool)))
      (mcp-sidecar--show-task task))))

(defun mcp-sidecar--cancel-task (conn task)
  "Cancel the running TASK of CONN."
  (let ((server (plist-get task :server))
        (id (plist-get task :taskId))
        (buffers (cl-remove-if-not (lambda (b) (with-current-buffer b
                                                 (derived-mode-p 'mcp-sidecar-tasks-mode)))
                                   (buffer-list))))
    ;; The person ends it: its end is not announced.
    (puthash (mcp-sidecar--task-key server id) t (mcp-sidecar--quiet conn))
    (mcp-sidecar--exec conn 'cancel-task (list :server server :taskId id)
                       (lambda (now)
                         (when (plist-get now :status)
                           (mcp-sidecar--on-task-status conn now))
                         (mcp-sidecar--say "cancelling the task %s › %s" server
                                           (format "%s" (plist-get task :tool)))
                         (dolist (buffer buffers)
                           (when (buffer-live-p buffer)
                             (with-current-buffer buffer (ignore-errors (revert-buffer))))))
                       (lambda (err) (mcp-sidecar--report (concat "cancelling the task of " server)
                                                          err)))))

(defun mcp-sidecar-tasks-cancel ()
  "Cancel the task on this line; the server gets tasks/cancel."
  (interactive)
  (let ((task (mcp-sidecar--task-at-point)))
    (unless (mcp-sidecar--task-running-p task)
      (user-error "This task has ended (%s)" (plist-get task :status)))
    (mcp-sidecar--cancel-task (mcp-sidecar--ensure mcp-sidecar--tasks-root) task)))

(defvar mcp-sidecar-tasks-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'mcp-sidecar-tasks-show)
    (define-key map "c" #'mcp-sidecar-tasks-cancel)
    map)
  "Keys of the tasks buffer.")

(define-derived-mode mcp-sidecar-tasks-mode tabulated-list-mode "MCP Tasks"
  "The MCP tasks of a project: running ones first, then those that ended.
\\<mcp-sidecar-tasks-mode-map>\\[revert-buffer] reads them again; on a task's line,
\\[mcp-sidecar-tasks-show] shows its result and \\[mcp-sidecar-tasks-cancel] cancels it."
  (setq tabulated-list-format [("Status" 14 t) ("Server" 14 t) ("Tool" 20 t)
                               ("Started" 10 nil) ("Ended" 10 nil) ("Message" 0 nil)])
  (add-hook 'tabulated-list-revert-hook #'mcp-sidecar--tasks-refresh nil t)
  (tabulated-list-init-header))

;;;###autoload
(defun mcp-sidecar-tasks ()
  "List the MCP tasks of the current project.
RET on a task shows its result, c cancels it."
  (interactive)
  (let ((root (mcp-sidecar--project-root)))
    (with-current-buffer (get-buffer-create (concat "*mcp tasks: "
                                                    (abbreviate-file-name root) "*"))
      (mcp-sidecar-tasks-mode)
      (setq mcp-sidecar--tasks-root root)
      (mcp-sidecar--tasks-refresh)
      (tabulated-list-print)
      (pop-to-buffer (current-buffer)))))

;;;###autoload
(defun mcp-sidecar-cancel-task ()
  "Cancel a running MCP task, picked with completion."
  (interactive)
  (let* ((conn (mcp-sidecar--ensure))
         (running (cl-remove-if-not #'mcp-sidecar--task-running-p (mcp-sidecar--list-tasks conn))))
    (unless running
      (user-error "No task is running"))
    (mcp-sidecar--cancel-task
     conn (mcp-sidecar--pick-row
           "Cancel which MCP task? " running
           (lambda (row) (concat (plist-get row :server) " › " (format "%s" (plist-get row :tool))
                                 " (" (format "%s" (plist-get row :status)) ", started "
                                 (mcp-sidecar--time (plist-get row :startedAt)) ")"))))))

;;; Skills

(defvar-local mcp-sidecar--skill nil
  "What a skill file buffer shows: a plist (:server :skill :uri :digest :verified).")

(defun mcp-sidecar--same-name (skill)
  "What SKILL shares its name with: \"same name as SERVER URI\", or nil."
  (let ((others (mapcar (lambda (ref) (format "%s %s" (plist-get ref :server)
                                              (plist-get ref :uri)))
                        (append (plist-get skill :sameName) nil))))
    (and others (concat "same name as " (string-join others ", ")))))

(defun mcp-sidecar--skill-entries (rows)
  "The skill ROWS of listSkills as `tabulated-list-entries'."
  (mapcar (lambda (row)
            (let ((clash (mcp-sidecar--same-name row))
                  (problem (mcp-sidecar--text (plist-get row :problem))))
              (list row
                    (vector (concat (format "%s" (plist-get row :name)) (if clash " ⚠" ""))
                            (plist-get row :server)
                            (let ((files (plist-get row :files)))
                              (if files (number-to-string (length files)) "dynamic"))
                            (string-join
                             (delq nil (list (if problem (concat "✗ cannot be loaded: " problem)
                                               (mcp-sidecar--text (plist-get row :description)))
                                             (and clash (concat "⚠ " clash))))
                             " · ")))))
          rows))

(defun mcp-sidecar--skills-refresh ()
  "Read the skills again (`tabulated-list-revert-hook')."
  (setq tabulated-list-entries
        (mcp-sidecar--skill-entries
         (cl-remove-if-not (lambda (row) (and (stringp (plist-get row :server))
                                              (stringp (plist-get row :uri))))
                           (append (mcp-sidecar--exec-sync
                                    (mcp-sidecar--ensure mcp-sidecar--tasks-root) 'list-skills)
                                   nil)))))

(defun mcp-sidecar--skill-at-point ()
  "The skill on this line of the skills buffer, or of this skill file buffer."
  (or (and (derived-mode-p 'mcp-sidecar-skills-mode) (tabulated-list-get-id))
      (and mcp-sidecar--skill (list :server (plist-get mcp-sidecar--skill :server)
                                    :uri (plist-get mcp-sidecar--skill :skill)))
      (user-error "No skill here")))

(defun mcp-sidecar--provenance (file)
  "Where the readSkill result FILE came from and whether it was verified."
  (let ((digest (plist-get file :digest)))
    (if (and (eq (plist-get file :verified) t) (stringp digest))
        (let* ((parts (split-string digest ":"))
               (hex (or (cadr parts) digest)))
          (format "%s · verified %s:%s" (plist-get file :server) (car parts)
                  (if (> (length hex) 20)
                      (concat (substring hex 0 8) "…" (substring hex -7))
                    hex)))
      (format "%s · dynamic: not verified" (plist-get file :server)))))

(defun mcp-sidecar-skill-copy-path ()
  "Copy the path (the SKILL.md URI) of the skill here, for an agent."
  (interactive)
  (let ((uri (plist-get (mcp-sidecar--skill-at-point) :uri)))
    (kill-new uri)
    (mcp-sidecar--say "copied %s" uri)))

(defvar mcp-sidecar-skill-file-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map "w" #'mcp-sidecar-skill-copy-path)
    (define-key map "q" #'quit-window)
    map)
  "Keys of a skill file buffer.")

(define-minor-mode mcp-sidecar-skill-file-mode
  "A read-only file of an MCP skill; \\[mcp-sidecar-skill-copy-path] copies the skill's path.
The header line says where it came from and whether it was verified."
  :lighter " MCP skill"
  :keymap mcp-sidecar-skill-file-mode-map)

(defun mcp-sidecar--open-skill-file (conn skill &optional file)
  "Read FILE of SKILL (its SKILL.md when nil) through CONN into a read-only buffer."
  (let ((server (plist-get skill :server))
        (uri (plist-get skill :uri)))
    (mcp-sidecar--exec
     conn 'read-skill (append (list :server server :uri uri) (and file (list :file file)))
     (lambda (contents)
       (let* ((target (or file uri))
              (buffer (get-buffer-create (concat "*mcp skill: " server " " target "*"))))
         (with-current-buffer buffer
           (let ((inhibit-read-only t))
             (erase-buffer)
             (funcall (mcp-sidecar--resource-mode nil target))
             (if (stringp (plist-get contents :text))
                 (insert (plist-get contents :text))
               (insert (format "[%s: %s bytes that are not text]\n" target
                               (plist-get contents :size))))
             (setq mcp-sidecar--skill (list :server server :skill uri :uri target
                                            :digest (plist-get contents :digest)
                                            :verified (eq (plist-get contents :verified) t)))
             (setq header-line-format
                   (string-replace "%" "%%" (concat (mcp-sidecar--provenance contents) "  "
                                                    target)))
             (setq buffer-read-only t)
             (mcp-sidecar-skill-file-mode 1)
             (set-buffer-modified-p nil)
             (goto-char (point-min))))
         (pop-to-buffer buffer)))
     (lambda (err) (mcp-sidecar--say "%s: %s cannot be opened: %s" server (or file uri)
                                     (mcp-sidecar--error-message err))))))

(defun mcp-sidecar-skills-open ()
  "Open the SKILL.md of the skill on this line."
  (interactive)
  (let ((skill (mcp-sidecar--skill-at-point)))
    (when (mcp-sidecar--text (plist-get skill :problem))
      (user-error "This skill cannot be loaded: %s" (plist-get skill :problem)))
    (mcp-sidecar--open-skill-file (mcp-sidecar--ensure mcp-sidecar--tasks-root) skill)))

(defun mcp-sidecar--skill-relative (skill-uri file)
  "FILE as a path below the folder of SKILL-URI (its SKILL.md), else FILE."
  (let ((folder (and (string-match "\\`\\(.*/\\)[^/]*\\'" skill-uri)
                     (match-string 1 skill-uri))))
    (if (and folder (string-prefix-p folder file)) (substring file (length folder)) file)))

(defun mcp-sidecar-skills-open-file ()
  "Open another file of the manifest of the skill on this line.
The file is picked with completion, by its path in the skill."
  (interactive)
  (let* ((skill (mcp-sidecar--skill-at-point))
         (uri (plist-get skill :uri))
         (files (mapcar (lambda (file) (cons (mcp-sidecar--skill-relative uri file) file))
                        (cl-remove uri (mapcar (lambda (f) (plist-get f :uri))
                                               (append (plist-get skill :files) nil))
                                   :test #'equal))))
    (when (mcp-sidecar--text (plist-get skill :problem))
      (user-error "This skill cannot be loaded: %s" (plist-get skill :problem)))
    (unless files
      (user-error "This skill lists no other file"))
    (mcp-sidecar--open-skill-file
     (mcp-sidecar--ensure mcp-sidecar--tasks-root) skill
     (cdr (assoc (completing-read "Open which file? " (mcp-sidecar--table (mapcar #'car files))
                                  nil t)
                 files)))))

(defvar mcp-sidecar-skills-mode-map
  (let ((map (make-sparse-keymap)))
    (define-key map (kbd "RET") #'mcp-sidecar-skills-open)
    (define-key map "f" #'mcp-sidecar-skills-open-file)
    (define-key map "w" #'mcp-sidecar-skill-copy-path)
    map)
  "Keys of the skills buffer.")

(define-derived-mode mcp-sidecar-skills-mode tabulated-list-mode "MCP Skills"
  "The skills of a project's MCP servers.
Two skills of one name are both listed, each marked ⚠.
\\<mcp-sidecar-skills-mode-map>\\[revert-buffer] reads them again; on a skill's line,
\\[mcp-sidecar-skills-open] opens its SKILL.md, \\[mcp-sidecar-skills-open-file] another file \
of it, \\[mcp-sidecar-skill-copy-path] copies its path."
  (setq tabulated-list-format [("Name" 22 t) ("Server" 14 t) ("Files" 8 nil)
                               ("Description" 0 nil)])
  (add-hook 'tabulated-list-revert-hook #'mcp-sidecar--skills-refresh nil t)
  (tabulated-list-init-header))

;;;###autoload
(defun mcp-sidecar-skills ()
  "List the skills of the current project's MCP servers.
RET on a skill opens its SKILL.md, w copies its path."
  (interactive)
  (let ((root (mcp-sidecar--project-root)))
    (with-current-buffer (get-buffer-create (concat "*mcp skills: "
                                                    (abbreviate-file-name root) "*"))
      (mcp-sidecar-skills-mode)
      (setq mcp-sidecar--tasks-root root)
      (mcp-sidecar--skills-refresh)
      (tabulated-list-print)
      (pop-to-buffer (current-buffer)))))

(provide 'mcp-sidecar-tasks)
;;; mcp-sidecar-tasks.el ends here
