;;; tasks-test.el --- A tool call that becomes a task; the tasks list; cancel  -*- lexical-binding: t; -*-

;; SPDX-License-Identifier: MIT OR Apache-2.0

;;; Commentary:

;; The demo server's slow_task (a task when the client declares the Tasks extension, as the
;; sidecar does) behind the real sidecar: `mcp-sidecar-call-tool' on it waits for the task (the
;; mode line counts it), answers its question in the minibuffer and shows its result;
;; `mcp-sidecar-tasks' lists it and shows its result again; `c' there cancels a running task (the
;; server's own last status message says it ran the cancel); a task no call waits for is
;; announced when it ends.

;;; Code:

(require 'mcp-sidecar-test-helpers)
(require 'mcp-sidecar-tasks)

(defun tasks-test-task (tool)
  "The task of TOOL the current sidecar knows, or nil."
  (let (found)
    (maphash (lambda (_key task) (when (equal (plist-get task :tool) tool) (setq found task)))
             (mcp-sidecar--tasks (mcp-sidecar--connection)))
    found))

(defun tasks-test-list-buffer ()
  "Open the tasks list; return its buffer."
  (mcp-sidecar-tasks)
  (mst-wait (lambda () (cl-find-if (lambda (b) (with-current-buffer b
                                                 (derived-mode-p 'mcp-sidecar-tasks-mode)))
                                   (buffer-list)))
            "the tasks buffer"))

(defun tasks-test-goto (tool)
  "Put point on the line of TOOL's task in the current tasks buffer."
  (goto-char (point-min))
  (should (search-forward (concat " " tool " ") nil t))
  (should (equal tool (plist-get (tabulated-list-get-id) :tool))))

(ert-deftest tasks-test-a-call-that-becomes-a-task ()
  "The call waits for the task, its question is answered, its result shows; then the list."
  (mst-start)
  (setq mst-minibuffers nil)
  (let (mode-lines)
    (let ((record (lambda () (push (mcp-sidecar--status-text) mode-lines))))
      (add-hook 'minibuffer-setup-hook record)
      (unwind-protect
          (mst-press "C-u M-x" '("mcp-sidecar-call-tool") "RET" '("slow_task") "TAB RET"
                     '("{\"steps\": 4, \"stepMs\": 150}") "RET"
                     "<f12>" '("Yes") "TAB RET"
                     "<f12>" '("Submit") "TAB RET")
        (remove-hook 'minibuffer-setup-hook record)))
    (let ((result (mst-result "demo" "slow_task")))
      (should (string-search "Done after 4 steps: you chose to keep the details." result)))
    ;; The question says which task asks.
    (should (string-match-p "demo, for the task started [0-9][0-9]:[0-9][0-9] UTC, asks: Keep the details?"
                            (car (car (mst-prompts "› Keep the details")))))
    ;; While its question was open, the task ran: the mode line counted it.
    (should (cl-some (lambda (line) (string-search "⧗1" line)) mode-lines)))
  (mst-wait (lambda () (equal "completed" (plist-get (tasks-test-task "slow_task") :status)))
            "the task to be completed")
  (should-not (string-search "⧗" (mcp-sidecar--status-text)))
  ;; The call waited for it: its end is not announced.
  (should-not (string-search "task demo › slow_task completed" (mst-messages)))
  ;; The list shows it; RET shows its result again.
  (with-current-buffer (tasks-test-list-buffer)
    (tasks-test-goto "slow_task")
    (should (string-search "completed" (buffer-substring (line-beginning-position)
                                                         (line-end-position))))
    (mcp-sidecar-tasks-show))
  (let* ((task (tasks-test-task "slow_task"))
         (text (mst-text (mst-buffer (format "*mcp task: demo/%s*" (plist-get task :taskId))))))
    (should (string-search "Done after 4 steps: you chose to keep the details." text))
    (should (string-search (concat "Task " (plist-get task :taskId) ": completed (done)") text)))
  (mst-back-to-workspace))

(ert-deftest tasks-test-cancel-from-the-list ()
  "c on a running task: the server runs its cancel, the task and the call end cancelled."
  (mst-start)
  (mcp-sidecar-call-tool "demo" "slow_task" (list :forever t :stepMs 100))
  (mst-wait (lambda () (equal "working" (plist-get (tasks-test-task "slow_task") :status)))
            "the task to run")
  (with-current-buffer (tasks-test-list-buffer)
    (select-window (get-buffer-window (current-buffer)))
    (tasks-test-goto "slow_task")
    (mst-press "c"))
  (mst-wait (lambda () (equal "cancelled" (plist-get (tasks-test-task "slow_task") :status)))
            "the task to end cancelled")
  ;; The server's own last word: it ran its cancellation.
  (should (equal "cancelled" (plist-get (tasks-test-task "slow_task") :statusMessage)))
  (mst-wait (lambda () (string-search "demo › slow_task: cancelled" (mst-messages)))
            "the call to end cancelled")
  (should (string-search "cancelling the task demo › slow_task" (mst-messages)))
  (should-not (string-search "task demo › slow_task was cancelled" (mst-messages)))
  (mst-back-to-workspace))

(ert-deftest tasks-test-a-task-nobody-waits-for-is-announced ()
  "A call not made by `mcp-sidecar-call-tool' (an agent's, say): its end is announced, once."
  (let ((conn (mst-start))
        result)
    (mcp-sidecar--exec conn 'call-tool (list :server "demo" :tool "slow_task"
                                             :arguments (list :steps 2 :stepMs 50))
                       (lambda (value) (setq result value)))
    (mst-press "<f12>" '("No") "TAB RET" "<f12>" '("Submit") "TAB RET")
    (mst-wait (lambda () result) "the call's result")
    (should (eq :json-false (plist-get (plist-get result :structuredContent) :keep)))
    (mst-wait (lambda () (string-search
                          "mcp-sidecar: task demo › slow_task completed (M-x mcp-sidecar-tasks shows it)"
                          (mst-messages)))
              "the announcement")
    (let ((messages (mst-messages)) (start 0) (n 0))
      (while (setq start (string-search "task demo › slow_task completed" messages start))
        (setq n (1+ n) start (1+ start)))
      (should (= n 1)))))

;;; tasks-test.el ends here
